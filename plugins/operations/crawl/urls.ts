/** The crawl's URL rules (canonical spelling, trap defences) live in core (the CLI reads them too); this path keeps the plugin's imports. */
export * from '../../../core/crawl-urls.js';
