// Two entry points of the Swift runtime that Swift code may not name (their names are reserved
// to the runtime), declared for Herald's NativeWeak. Both are part of the runtime's exported
// interface on every platform, with the C calling convention; the runtime is linked into every
// Swift program, statically or not.
#ifndef HERALD_RUNTIME_SHIMS_H
#define HERALD_RUNTIME_SHIMS_H

#include <stdbool.h>

/// Retains a native Swift object unless it has begun to deinitialize (what loading a weak
/// reference does inside); returns the object, or NULL.
extern void *_Nullable swift_tryRetain(void *_Nonnull object);

/// Whether a native Swift object has begun to deinitialize. Retains nothing.
extern bool swift_isDeallocating(void *_Nonnull object);

#endif
