/**
 * `scour doctor`'s probes of the remote browsers (SCOUR_BROWSER_WS_ENDPOINT):
 * each endpoint joined as the browser fetcher joins it, and a page in it
 * sent through an egress proxy that listens as the settings say and refuses
 * everything, so the check proves the browser reaches Scour's proxies
 * without the browser reaching anything else.
 */
import type { RemoteBrowserProbe } from '../adapters/cli/doctor.js';
import { EGRESS_HEADER, startEgressProxy } from '../plugins/fetchers/browser/egress-proxy.js';
import { errText, joinEndpoint, parseBrowserEndpoints } from '../plugins/fetchers/browser/remote.js';
import type { Settings } from './env.js';

/** A name no resolver answers (RFC 2606): the deny proxy refuses it before any lookup. */
const PROBE_URL = 'http://scour-doctor.invalid/';

export function remoteBrowserProbes(settings: Pick<Settings, 'browserEndpoints' | 'browserProxyHost' | 'browserProxyAdvertisedHost' | 'browserProxyPorts'>): RemoteBrowserProbe[] {
  return parseBrowserEndpoints(settings.browserEndpoints.join(',')).endpoints.map((e) => ({
    label: e.label,
    async probe(timeoutMs) {
      const { chromium } = await import('playwright');
      // Playwright's message may quote the endpoint, query (and token) included: shown without it.
      const browser = await joinEndpoint(chromium, e, timeoutMs).catch((err: unknown) => { throw new Error(errText(err)); });
      const deny = await startEgressProxy({
        policy: 'deny',
        listen: { host: settings.browserProxyHost, advertisedHost: settings.browserProxyAdvertisedHost, ports: settings.browserProxyPorts },
      });
      try {
        const version = browser.version();
        const context = await browser.newContext({ proxy: { server: deny.url, bypass: '<-loopback>' } });
        let proxyReached = false;
        try {
          const page = await context.newPage();
          const response = await page.goto(PROBE_URL, { timeout: timeoutMs }).catch(() => null);
          proxyReached = response !== null && (await response.headerValue(EGRESS_HEADER)) === deny.token;
        } finally {
          await context.close().catch(() => undefined);
        }
        return { version, proxyReached, proxyUrl: deny.url };
      } finally {
        await deny.close();
        await browser.close().catch(() => undefined);
      }
    },
  }));
}
