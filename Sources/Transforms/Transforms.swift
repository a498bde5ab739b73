// The Transforms layer: map, filter, unwrap, cache, weak, author filters, combinators, scheduling
// and coalescing, async sequences. It builds on Messaging and re-exports it, as the layering
// promises.
@_exported import Messaging
