// The KeyPathBridge layer (paths, coalescing, bindings, collections, synthetic properties) arrives
// with its own issues. Until then this module only re-exports Transforms (and so Messaging).
@_exported import Transforms
