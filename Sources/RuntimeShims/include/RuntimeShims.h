// What Herald's Swift code needs from C: two entry points of the Swift runtime that Swift code
// may not name (their names are reserved to the runtime), four thread-local variables (Swift
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

/// How many `batch { }` the thread is inside: read by every propagation and every coalesced
/// schedule, so one load where a look-up of the thread's context would be a call. Defined in
/// RuntimeShims.c.
extern _Thread_local long herald_thread_batch_depth_storage;

static inline long herald_thread_batch_depth(void) { return herald_thread_batch_depth_storage; }

static inline void herald_set_thread_batch_depth(long depth) {
    herald_thread_batch_depth_storage = depth;
}

/// The calling thread's part in Messaging's delivery turns, in one word so that taking and
/// giving up a delivering role costs an increment and a decrement with a compare: twice the
/// number of messengers' delivering roles the thread holds, plus 1 if the thread queued work
/// behind another thread's delivery, while it delivered itself, and must pay that turn once it
/// holds no role (see `OwedTurns`). Defined in RuntimeShims.c.
extern _Thread_local long herald_thread_delivery_storage;

/// The calling thread took a messenger's delivering role.
static inline void herald_enter_delivery(void) { herald_thread_delivery_storage += 2; }

/// The calling thread gave a messenger's delivering role up (or handed it over). True if it
/// now holds no role and owes turns.
static inline bool herald_leave_delivery(void) {
    herald_thread_delivery_storage -= 2;
    return herald_thread_delivery_storage == 1;
}

/// Whether the calling thread holds a messenger's delivering role.
static inline bool herald_is_delivering(void) { return herald_thread_delivery_storage > 1; }

/// Records whether the calling thread owes turns.
static inline void herald_set_owes_turns(bool owes) {
    herald_thread_delivery_storage = (herald_thread_delivery_storage & ~1L) | (owes ? 1 : 0);
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
