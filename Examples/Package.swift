// swift-tools-version: 6.0
import PackageDescription

// Herald's runnable demo: `swift run --package-path Examples demo` from the repository root.
let package = Package(
    name: "HeraldExamples",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    dependencies: [.package(name: "Herald", path: "..")],
    targets: [
        .executableTarget(
            name: "demo",
            dependencies: [.product(name: "KeyPathBridge", package: "Herald")]
        )
    ],
    swiftLanguageModes: [.v6]
)
