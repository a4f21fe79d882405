/**
 * The `scour` command's entry point (bin/scour.js runs its build): the
 * composition root hands the CLI adapter (adapters/cli) what its commands
 * run on. Each part is loaded when a command needs it, so `scour accounts`
 * loads no HTTP or plugin code and `scour help` loads neither.
 */
import { type CliHost, runCli } from '../adapters/cli/index.js';
import { ENV_VARS, loadSettings, type Settings } from './env.js';
import { VERSION } from './version.js';

const host: CliHost<Settings> = {
  version: VERSION,
  environment: ENV_VARS,
  loadSettings,
  createScour: async (settings, role) => (await import('./container.js')).createScour({ settings, role }),
  openAccounts: async (settings) => (await import('./store.js')).openAccounts(settings),
  openStore: async (settings) => (await import('./store.js')).openStore(settings),
  openSearchIndex: async (settings) => (await import('./store.js')).openSearchIndex(settings),
  localCrawler: async (settings) => (await import('./local-crawl.js')).localCrawler(settings),
  doctorProbes: async (settings) => {
    const [processes, proxies] = await Promise.all([import('../plugins/fetchers/browser/processes.js'), import('../plugins/proxies/configured.js')]);
    return {
      processTree: processes.processTree, looksLike: processes.looksLike, parseProxies: (text) => proxies.parseProxyConfig(text), redactProxyUrl: proxies.redactProxyUrl,
      searchProviders: async () => (await import('./search.js')).providerProbes(settings),
      remoteBrowsers: async () => (await import('./remote-browsers.js')).remoteBrowserProbes(settings),
    };
  },
};

void runCli(process.argv.slice(2), host);
