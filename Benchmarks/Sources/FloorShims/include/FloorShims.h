// The floor engine's thread-local variables (Benchmarks/Sources/BenchmarkSuite/Floor): the
// thread's open evaluation frame and its context, each found with one load, as Herald's are.
#ifndef FLOOR_SHIMS_H
#define FLOOR_SHIMS_H

extern _Thread_local void *_Nullable floor_thread_frame_storage;
extern _Thread_local void *_Nullable floor_thread_context_storage;

static inline void *_Nullable floor_thread_frame(void) { return floor_thread_frame_storage; }
static inline void floor_set_thread_frame(void *_Nullable frame) {
    floor_thread_frame_storage = frame;
}
static inline void *_Nullable floor_thread_context(void) { return floor_thread_context_storage; }
static inline void floor_set_thread_context(void *_Nullable context) {
    floor_thread_context_storage = context;
}

#endif
