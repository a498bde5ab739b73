// The floor engine's thread-local state (Benchmarks/Sources/BenchmarkSuite/Floor): the thread's
// open evaluation frame, its context, and whether a write inside an evaluation left tells for
// the outermost read, each found with one load, as Herald's thread state is.
#ifndef FLOOR_SHIMS_H
#define FLOOR_SHIMS_H

#include <stdbool.h>

extern _Thread_local void *_Nullable floor_thread_frame_storage;
extern _Thread_local void *_Nullable floor_thread_context_storage;
extern _Thread_local bool floor_thread_deferred_storage;

/// The thread's open evaluation frame (an unretained FloorFrame), or null.
static inline void *_Nullable floor_thread_frame(void) { return floor_thread_frame_storage; }

/// Opens `frame` (or closes the innermost frame, passing the one outside it).
static inline void floor_set_thread_frame(void *_Nullable frame) {
    floor_thread_frame_storage = frame;
}

/// The thread's context (a FloorContext, retained for the thread's life), or null.
static inline void *_Nullable floor_thread_context(void) { return floor_thread_context_storage; }

/// Sets the thread's context (once, when it is made).
static inline void floor_set_thread_context(void *_Nullable context) {
    floor_thread_context_storage = context;
}

/// A write inside an evaluation queued tells, for the outermost read to run when it ends.
static inline void floor_defer_propagation(void) { floor_thread_deferred_storage = true; }

/// Whether a write inside an evaluation queued tells since this was last called; clears that.
static inline bool floor_take_deferred_propagation(void) {
    if (!floor_thread_deferred_storage) { return false; }
    floor_thread_deferred_storage = false;
    return true;
}

#endif
