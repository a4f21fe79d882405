/**
 * The document reader (core/documents.ts's port): PDF through pdf.js
 * (pdf.ts), DOCX through mammoth to HTML (docx.ts), RSS, Atom and JSON
 * Feed (feeds.ts). Each read is bounded by its page count and a time limit.
 */
import type { DocumentKind, DocumentRead, DocumentReader, DocumentReadOptions } from '../../core/documents.js';
import { DocumentUnreadable } from '../../core/errors.js';
import { readDocx } from './docx.js';
import { readFeed } from './feeds.js';
import { readPdf } from './pdf.js';

export function createDocumentReader(): DocumentReader {
  return {
    async read(kind: DocumentKind, bytes: Uint8Array, options: DocumentReadOptions): Promise<DocumentRead> {
      switch (kind) {
        case 'pdf': return readPdf(bytes, options);
        case 'docx': return readDocx(bytes, options);
        case 'rss': case 'atom': case 'json_feed': return readFeed(kind, bytes);
        default: throw new DocumentUnreadable({ message: `${kind as string} documents are not read by this server`, documentType: kind, details: 'unsupported' });
      }
    },
  };
}
