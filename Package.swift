// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "Herald",
    // `Synchronization.Atomic` (used by every observation) sets the Apple minimums.
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "Messaging", targets: ["Messaging"]),
        .library(name: "Transforms", targets: ["Transforms"]),
        .library(name: "KeyPathBridge", targets: ["KeyPathBridge"]),
    ],
    targets: [
        .target(name: "Messaging"),
        .target(name: "Transforms", dependencies: ["Messaging"]),
        .target(name: "KeyPathBridge", dependencies: ["Transforms"]),
        .testTarget(name: "MessagingTests", dependencies: ["Messaging"]),
        .testTarget(name: "TransformsTests", dependencies: ["Transforms"]),
        .testTarget(name: "KeyPathBridgeTests", dependencies: ["KeyPathBridge"]),
    ],
    swiftLanguageModes: [.v6]
)
