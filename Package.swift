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
        // `publisher()` on every observable object, where Combine exists (Apple's platforms).
        // Its own product, so that the others never link Combine. On Linux it is empty here;
        // OpenCombineTests/ compiles the same source against OpenCombine and tests it.
        .library(name: "HeraldCombine", targets: ["HeraldCombine"]),
    ],
    targets: [
        // For Messaging: declares two Swift runtime functions (see NativeWeak) and defines the
        // thread-local variables that find each thread's dependency-tracking context and its
        // innermost open evaluation.
        .target(name: "RuntimeShims"),
        .target(name: "Messaging", dependencies: ["RuntimeShims"]),
        .target(name: "Transforms", dependencies: ["Messaging"]),
        .target(name: "KeyPathBridge", dependencies: ["Transforms"]),
        .target(name: "HeraldCombine", dependencies: ["Messaging"]),
        // Helpers shared by the test targets (recording observers, leak checks, thread helpers).
        .target(name: "HeraldTestSupport", dependencies: ["Messaging"], path: "Tests/Support"),
        .testTarget(name: "MessagingTests", dependencies: ["Messaging", "HeraldTestSupport"]),
        .testTarget(name: "TransformsTests", dependencies: ["Transforms", "HeraldTestSupport"]),
        .testTarget(
            name: "KeyPathBridgeTests", dependencies: ["KeyPathBridge", "HeraldTestSupport"]),
        // What an app relies on: the main actor, Swift's Observation (and so SwiftUI).
        .testTarget(name: "AppTests", dependencies: ["KeyPathBridge", "HeraldTestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
