// KeyPathBridge builds on Transforms (and so Messaging), which it re-exports: `import
// KeyPathBridge` gives a user everything.
@_exported import Transforms
