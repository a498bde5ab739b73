// The runtime functions declared in include/RuntimeShims.h are the Swift runtime's; the one
// thing defined here is the thread-local variable.
#include "RuntimeShims.h"

_Thread_local void *_Nullable herald_thread_context_storage = 0;
