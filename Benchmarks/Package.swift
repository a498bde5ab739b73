// swift-tools-version: 6.0
import PackageDescription

// Herald side by side with its peers (raw closures, OpenCombine, Swift's Observation), in one
// process run. A separate package: the library itself keeps zero dependencies.
let package = Package(
    name: "HeraldBenchmarks",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    dependencies: [
        .package(name: "Herald", path: ".."),
        .package(url: "https://github.com/OpenCombine/OpenCombine", from: "0.14.0"),
        .package(url: "https://github.com/ordo-one/malloc-interposer", from: "1.6.1"),
    ],
    targets: [
        // The workloads (one file each), the peers and the harness.
        .target(
            name: "BenchmarkSuite",
            dependencies: [
                .product(name: "Messaging", package: "Herald"),
                .product(name: "Transforms", package: "Herald"),
                .product(name: "KeyPathBridge", package: "Herald"),
                .product(name: "OpenCombine", package: "OpenCombine"),
                "FloorShims",
            ]
        ),
        // The floor engine's two thread-local variables (see BenchmarkSuite/Floor).
        .target(name: "FloorShims"),
        // Times the workloads; runs herald-benchmarks-mallocs for the allocation counts.
        .executableTarget(name: "herald-benchmarks", dependencies: ["BenchmarkSuite"]),
        // Counts allocations with ordo-one/malloc-interposer linked in (never loaded while timing).
        .executableTarget(
            name: "herald-benchmarks-mallocs",
            dependencies: [
                "BenchmarkSuite",
                .product(name: "MallocInterposerSwift", package: "malloc-interposer"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
