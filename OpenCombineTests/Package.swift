// swift-tools-version: 6.0
import PackageDescription

// The HeraldCombine product's source (Sources/HeraldCombine, linked here), compiled against
// OpenCombine and tested, so that it is tested on Linux, where Apple's Combine does not exist.
// A separate package: the library itself keeps zero dependencies.
// This package's own targets only (OpenCombine's warnings are not ours).
let warningsAsErrors: [SwiftSetting] = [.unsafeFlags(["-warnings-as-errors"])]

let package = Package(
    name: "HeraldOpenCombineTests",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    dependencies: [
        .package(name: "Herald", path: ".."),
        .package(url: "https://github.com/OpenCombine/OpenCombine", from: "0.14.0"),
    ],
    targets: [
        .target(
            name: "HeraldOpenCombine",
            dependencies: [
                .product(name: "Messaging", package: "Herald"),
                .product(name: "OpenCombine", package: "OpenCombine"),
            ],
            // The shared source picks OpenCombine only where this is defined.
            swiftSettings: warningsAsErrors + [.define("HERALD_OPENCOMBINE")]
        ),
        .testTarget(
            name: "HeraldOpenCombineTests",
            dependencies: [
                "HeraldOpenCombine",
                .product(name: "KeyPathBridge", package: "Herald"),
                .product(name: "OpenCombine", package: "OpenCombine"),
            ],
            swiftSettings: warningsAsErrors
        ),
    ],
    swiftLanguageModes: [.v6]
)
