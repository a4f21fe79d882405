import { describe, expect, it } from 'vitest';
import { metaDataExtractor, type MetaData } from '../../plugins/extractors/meta-data.js';
import { page } from './support.js';

const meta = (html: string): MetaData => metaDataExtractor.extract(page(html, 'https://example.com/a/b'), {}) as MetaData;

describe('meta_data', () => {
  it('reads the standard fields, Open Graph, Twitter and the other meta tags', () => {
    const html = `<!doctype html><html lang="en-GB"><head>
      <meta charset="UTF-8">
      <title> The  &amp; Title </title>
      <meta name="description" content=" A description ">
      <meta name="keywords" content="a, b">
      <meta name="robots" content="index">
      <link rel="canonical" href="/canonical">
      <link rel="shortcut icon" href="fav.ico">
      <meta property="og:title" content="OG title">
      <meta property="og:type" content="article">
      <meta property="og:image" content="/1.png">
      <meta property="og:image" content="https://cdn.test/2.png">
      <meta property="og:image:width" content="1200">
      <meta property="article:published_time" content="2020-01-01">
      <meta name="twitter:card" content="summary_large_image">
      <meta property="twitter:site" content="@site">
      <meta name="twitter:image" content="tw.png">
      <meta http-equiv="X-UA-Compatible" content="IE=edge">
      <meta property="fb:app_id" content="123">
    </head><body></body></html>`;
    expect(meta(html)).toEqual({
      title: 'The & Title',
      description: 'A description',
      canonical: 'https://example.com/canonical',
      language: 'en-GB',
      charset: 'utf-8',
      favicon: 'https://example.com/a/fav.ico',
      open_graph: {
        title: 'OG title',
        type: 'article',
        image: ['https://example.com/1.png', 'https://cdn.test/2.png'],
        'image:width': '1200',
        'article:published_time': '2020-01-01',
      },
      twitter: { card: 'summary_large_image', site: '@site', image: 'https://example.com/a/tw.png' },
      meta: { description: 'A description', keywords: 'a, b', robots: 'index', 'x-ua-compatible': 'IE=edge', 'fb:app_id': '123' },
    });
  });

  it('falls back: title and description from Open Graph, charset and language from http-equiv, favicon from apple-touch-icon', () => {
    const m = meta(`<head><meta property="og:title" content="OG"><meta property="og:description" content="OGD">
      <meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-1"><meta http-equiv="content-language" content="fr, en">
      <link rel="apple-touch-icon" href="/touch.png"></head>`);
    expect(m).toMatchObject({ title: 'OG', description: 'OGD', charset: 'iso-8859-1', language: 'fr', favicon: 'https://example.com/touch.png', canonical: null });
  });

  it('gives nulls and empty maps for a page without metadata', () => {
    expect(meta('')).toEqual({
      title: null, description: null, canonical: null, language: null, charset: null, favicon: null, open_graph: {}, twitter: {}, meta: {},
    });
  });

  it('resolves against <base href> and keeps "__proto__" a plain key', () => {
    const m = meta('<base href="https://base.test/"><link rel="canonical" href="c"><meta name="__proto__" content="x"><meta name="__proto__" content="y">');
    expect(m.canonical).toBe('https://base.test/c');
    expect(Object.getPrototypeOf(m.meta)).toBe(Object.prototype);
    expect(Object.keys(m.meta)).toEqual(['__proto__']);
    expect(Object.getOwnPropertyDescriptor(m.meta, '__proto__')?.value).toEqual(['x', 'y']);
  });
});
