// The declarations in include/RuntimeShims.h are all there is: the Swift runtime defines them.
#include "RuntimeShims.h"
