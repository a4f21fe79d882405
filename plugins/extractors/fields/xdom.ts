/**
 * A read-only W3C-DOM view of htmlparser2's tree, for the `xpath` library
 * (DOM 3 XPath 1.0), which needs nodeType, nodeName, localName,
 * childNodes, siblings, attribute nodes and a document order. Built once per
 * page, and only when a request has an XPath selector: each mirror node
 * points back at its htmlparser2 node (`src`), so what XPath selects is
 * read by the same code as what CSS selects. Built iteratively (hostile
 * pages nest deep). Elements and attributes have no namespace, so `//div`
 * and `//a/@href` match as written; names are matched case-insensitively.
 */
import type { AnyNode, Document, Element } from '../../sdk/dom.js';

const ELEMENT = 1;
const ATTRIBUTE = 2;
const TEXT = 3;
const COMMENT = 8;
const DOCUMENT = 9;
const NO_NODES: XNode[] & { item?: (i: number) => XNode | null } = Object.freeze([]) as never;
const XML_NS = 'http://www.w3.org/XML/1998/namespace';

/** The node kinds of the view: element, attribute, text, comment, document. */
export class XNode {
  parentNode: XNode | null = null;
  /** Shared and empty until a child is added (most nodes are leaves: one array less each). */
  childNodes: XNode[] = NO_NODES;
  firstChild: XNode | null = null;
  lastChild: XNode | null = null;
  nextSibling: XNode | null = null;
  previousSibling: XNode | null = null;
  ownerDocument: XNode | null = null;
  /** Shared and empty for a node without attributes. */
  attributes: XNode[] & { item?: (i: number) => XNode | null } = NO_NODES;
  // Rare or constant members live on the prototype (below): fewer fields per node, less to collect.
  declare ownerElement: XNode | null;
  declare documentElement: XNode | null;
  declare readonly namespaceURI: null;
  declare readonly prefix: null;
  constructor(
    readonly nodeType: number,
    readonly nodeName: string,
    readonly nodeValue: string | null,
    /** Position in document order (an element's attributes follow it, then its children). */
    readonly order: number,
    /** The htmlparser2 node (for an attribute: its element). */
    readonly src: AnyNode | undefined,
  ) {}

  get localName(): string { return this.nodeName; }
  get name(): string { return this.nodeName; }
  get value(): string | null { return this.nodeValue; }
  get tagName(): string { return this.nodeName; }
  get data(): string | null { return this.nodeValue; }

  /** An element's attribute (names are lower case in HTML), or null. */
  getAttribute(name: string): string | null {
    const el = this.nodeType === ELEMENT ? (this.src as Element) : undefined;
    return el?.attribs[name.toLowerCase()] ?? null;
  }

  /** lang() asks for xml:lang; HTML writes lang. */
  getAttributeNS(ns: string | null, name: string): string | null {
    return ns === XML_NS ? this.getAttribute(`xml:${name}`) ?? this.getAttribute(name) : this.getAttribute(name);
  }

  /** The document's first element with this id (id()), looked up in an index built with the view. */
  getElementById(id: string): XNode | null {
    return this.ids?.get(id) ?? null;
  }

  declare ids: Map<string, XNode> | undefined;

  /** DOCUMENT_POSITION_PRECEDING (2) or FOLLOWING (4): the order is all the xpath library reads. */
  compareDocumentPosition(other: XNode): number {
    return other.order < this.order ? 2 : other.order > this.order ? 4 : 0;
  }
}

Object.assign(XNode.prototype, { ownerElement: null, documentElement: null, namespaceURI: null, prefix: null, ids: undefined });

const itemOf = function item(this: XNode[], i: number): XNode | null { return this[i] ?? null; };

export interface XDocument {
  readonly root: XNode;
  /** The view of an htmlparser2 element (or the document). */
  readonly of: (n: AnyNode) => XNode | undefined;
}

/** Build the view of a parsed page. */
export function buildXDocument(doc: Document): XDocument {
  let order = 0;
  const root = new XNode(DOCUMENT, '#document', null, order++, doc);
  const map = new Map<AnyNode, XNode>([[doc, root]]);
  const ids = new Map<string, XNode>();
  root.ids = ids;
  const stack: Array<[AnyNode, XNode]> = [];
  const push = (parent: XNode, children: readonly AnyNode[]) => {
    for (let i = children.length - 1; i >= 0; i--) stack.push([children[i]!, parent]);
  };
  push(root, doc.children);
  while (stack.length > 0) {
    const [node, parent] = stack.pop()!;
    const t = node.type as string;
    let x: XNode | undefined;
    let children: readonly AnyNode[] | undefined;
    if (t === 'tag' || t === 'script' || t === 'style') {
      const el = node as Element;
      x = new XNode(ELEMENT, el.name, null, order++, el);
      for (const name in el.attribs) {
        const a = new XNode(ATTRIBUTE, name, el.attribs[name]!, order++, el);
        a.ownerElement = x;
        a.ownerDocument = root;
        if (x.attributes === NO_NODES) {
          x.attributes = [];
          x.attributes.item = itemOf;
        }
        x.attributes.push(a);
      }
      children = el.children;
      if (parent === root && root.documentElement === null) root.documentElement = x;
      const id = el.attribs.id;
      if (id !== undefined && !ids.has(id)) ids.set(id, x);
    } else if (t === 'text') x = new XNode(TEXT, '#text', (node as AnyNode & { data: string }).data, order++, node);
    else if (t === 'comment') x = new XNode(COMMENT, '#comment', (node as AnyNode & { data: string }).data, order++, node);
    else if (t === 'cdata') {
      // A CDATA section (in foreign content) holds one text child: its text stands in its place.
      const text = (node as AnyNode & { children: AnyNode[] }).children.map((c) => (c as AnyNode & { data?: string }).data ?? '').join('');
      x = new XNode(TEXT, '#text', text, order++, node);
    }
    if (x === undefined) continue; // doctype, processing instructions
    x.ownerDocument = root;
    x.parentNode = parent;
    const prev = parent.lastChild;
    if (prev !== null) {
      prev.nextSibling = x;
      x.previousSibling = prev;
    } else parent.firstChild = x;
    parent.lastChild = x;
    if (parent.childNodes === NO_NODES) parent.childNodes = [];
    parent.childNodes.push(x);
    map.set(node, x);
    if (children !== undefined) push(x, children);
  }
  return { root, of: (n) => map.get(n) };
}
