/// What an evaluation read: a source, and for a computed one the version it had.
struct FloorLink {
    /// The source (unretained: the dependent outlives it, and the source the dependent).
    let node: Unmanaged<FloorNode>
    /// The source again if it is a computed property (its version is checked), else nil.
    let computed: Unmanaged<FloorComputedBase>?
    /// The version of a computed source when the evaluation read it.
    var version: UInt64
}
