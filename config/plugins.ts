/** The built-in plugin set. Custom plugins are added beside these at boot. */
import type { PluginBase } from '../core/plugin.js';
import { systemOperation } from '../plugins/operations/system.js';
import { toolsOperation } from '../plugins/operations/tools.js';
import { builtinTools } from '../plugins/tools/index.js';

export const builtinPlugins: readonly PluginBase[] = [systemOperation, toolsOperation, ...builtinTools];
