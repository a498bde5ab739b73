// The runtime functions declared in include/RuntimeShims.h are the Swift runtime's; the
// things defined here are the three thread-local variables and the lock's compiler barrier.
#include "RuntimeShims.h"

_Thread_local void *_Nullable herald_thread_context_storage = 0;
_Thread_local void *_Nullable herald_thread_top_frame_storage = 0;
_Thread_local long herald_thread_batch_depth_storage = 0;
_Thread_local long herald_thread_delivery_storage = 0;

void herald_lock_barrier(void) { __asm__ __volatile__("" ::: "memory"); }
