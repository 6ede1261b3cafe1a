// SwiftPM needs one translation unit in a C target; the target is headers only.
#include "CBluetooth.h"
