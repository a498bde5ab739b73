import Messaging

/// A stand-alone transform that forwards every message of an origin it holds weakly.
///
/// ```swift
/// let number = Var(12)
/// let weakNumber = number.weak()
/// observer.observe(weakNumber) { update in }
/// var weakNumbers = [Weak<Var<Int>>]()
/// weakNumbers.append(weakNumber)
/// ```
///
/// Use it to put an observable object into a data structure, or to make it the origin of
/// another transform, without keeping it alive. It exists only stand-alone.
public final class Weak<Origin: ObservableObject>: Messenger<Origin.Message> {
    @usableFromInline let link: OriginLink<Origin>

    /// Wraps `origin` weakly.
    @inlinable
    public init(_ origin: Origin, fileID: StaticString = #fileID, line: UInt = #line) {
        let core = MessengerCore<Origin.Message>()
        link = OriginLink(
            origin: origin, weakly: true, site: DeclarationSite(fileID: fileID, line: line)
        ) { message, author in
            core.send(message, from: author)
        }
        super.init(core: core)
    }

    /// The origin, or `nil` once it died. Setting it re-wires (and holds the new one weakly too).
    public var origin: Origin? {
        get { link.origin }
        set { link.origin = newValue }
    }
}

extension ObservableObject {
    /// A stand-alone transform that holds this object weakly and forwards its messages.
    @inlinable
    public func weak(fileID: StaticString = #fileID, line: UInt = #line) -> Weak<Self> {
        Weak(self, fileID: fileID, line: line)
    }
}

// Thread-safe by construction (its links and messenger core own locks); it is `Sendable` when
// what it holds and sends is.
extension Weak: @unchecked Sendable where Origin: Sendable, Origin.Message: Sendable {}
