// The Transforms layer (map, filter, unwrap, cache, author filters, combinators) arrives with its
// own issue. Until then this module only re-exports Messaging, as the layering promises.
@_exported import Messaging
