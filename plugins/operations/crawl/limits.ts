/** The crawl's bounds and glob check live in core (the CLI reads them too); this path keeps the plugin's imports. */
export * from '../../../core/crawl-limits.js';
