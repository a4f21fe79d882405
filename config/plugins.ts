/** The built-in plugin set. Custom plugins are added beside these at boot. */
import type { PluginBase } from '../core/plugin.js';
import { adminOperation } from '../plugins/operations/admin.js';
import { systemOperation } from '../plugins/operations/system.js';
import { playgroundOperation } from '../plugins/operations/playground/index.js';
import { usageOperation } from '../plugins/operations/usage.js';
import { toolsOperation } from '../plugins/operations/tools.js';
import { tavilyOperation } from '../plugins/operations/tavily/index.js';
import { builtinTools } from '../plugins/tools/index.js';

export const builtinPlugins: readonly PluginBase[] = [systemOperation, usageOperation, adminOperation, toolsOperation, playgroundOperation, tavilyOperation, ...builtinTools];
