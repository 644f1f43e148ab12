// Native fixture that does not compile.
#include "kforge_native.h"

KFORGE_NATIVE_ABI()

KFORGE_EXPORT int32_t kforge_forward(const kf_call* call) {
  return undeclared_function(call);
}
