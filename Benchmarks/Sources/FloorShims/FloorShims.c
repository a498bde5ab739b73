#include "FloorShims.h"

_Thread_local void *_Nullable floor_thread_frame_storage = 0;
_Thread_local void *_Nullable floor_thread_context_storage = 0;
_Thread_local bool floor_thread_deferred_storage = false;
