// What Herald's Swift code needs from C: two entry points of the Swift runtime that Swift code
// may not name (their names are reserved to the runtime), two thread-local variables (Swift
// has none), and a compiler barrier for Herald's lock.
#ifndef HERALD_RUNTIME_SHIMS_H
#define HERALD_RUNTIME_SHIMS_H

#include <stdbool.h>

// Both runtime functions are part of the runtime's exported interface on every platform, with
// the C calling convention; the runtime is linked into every Swift program, statically or not.

/// Retains a native Swift object unless it has begun to deinitialize (what loading a weak
/// reference does inside); returns the object, or NULL.
extern void *_Nullable swift_tryRetain(void *_Nonnull object);

/// Whether a native Swift object has begun to deinitialize. Retains nothing.
extern bool swift_isDeallocating(void *_Nonnull object);

/// The calling thread's dependency-tracking context (Messaging's `ThreadContext`, unretained),
/// or NULL until the thread made one. Defined in RuntimeShims.c.
extern _Thread_local void *_Nullable herald_thread_context_storage;

/// The calling thread's context, or NULL. Inline: linked into an executable (how SwiftPM builds
/// Herald into a program), a load relative to the thread pointer, where `pthread_getspecific` is
/// a call and a bounds check; in a shared library, a call to `__tls_get_addr`.
static inline void *_Nullable herald_thread_context(void) {
    return herald_thread_context_storage;
}

/// Stores the calling thread's context (NULL when the thread lets it go).
static inline void herald_set_thread_context(void *_Nullable context) {
    herald_thread_context_storage = context;
}

/// The calling thread's innermost open evaluation frame (Messaging's `EvaluationFrame`,
/// unretained), or NULL if none is open: what a read of a Herald property checks. A copy of its
/// context's `top`, which other threads may read (for a cycle's message) and this may not.
/// Defined in RuntimeShims.c.
extern _Thread_local void *_Nullable herald_thread_top_frame_storage;

/// The calling thread's innermost open evaluation frame, or NULL.
static inline void *_Nullable herald_thread_top_frame(void) {
    return herald_thread_top_frame_storage;
}

/// Stores the calling thread's innermost open evaluation frame (NULL when none is open).
static inline void herald_set_thread_top_frame(void *_Nullable frame) {
    herald_thread_top_frame_storage = frame;
}

/// Does nothing, in a way no optimizer may look through: Herald's `Lock` calls it just before
/// the store that unlocks. Defined in RuntimeShims.c, so Swift's optimizer sees only a call to
/// an unknown function, which may retain or release any object and read or write any memory.
/// No retain of a reference read inside the critical section can then be moved after the
/// unlocking (where another thread may already have released that object), and no release
/// from after the unlocking can be moved into it (where a `deinit` that locks would wait for
/// itself). The empty `asm` with a memory clobber keeps it a barrier even if link-time
/// optimization inlines it.
extern void herald_lock_barrier(void);

#endif
