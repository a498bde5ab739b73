import BenchmarkSuite

// Times every workload with every system interleaved in this one process, then runs
// herald-benchmarks-mallocs for the allocation counts. See Benchmarks/README.md.
BenchmarkCommand.main()
