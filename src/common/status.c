/* Status strings, generated from the one list in osmp.h, and the version. */
#include "osmp.h"

const char *osmp_status_str(int status)
{
    switch (status) {
#define OSMP__STATUS_TEXT(name, value, text)                                                                 \
    case value:                                                                                              \
        return text;
        OSMP_STATUS_MAP(OSMP__STATUS_TEXT)
#undef OSMP__STATUS_TEXT
    }
    return "unknown status";
}

const char *osmp_status_name(int status)
{
    switch (status) {
#define OSMP__STATUS_NAME(name, value, text)                                                                 \
    case value:                                                                                              \
        return "OSMP_" #name;
        OSMP_STATUS_MAP(OSMP__STATUS_NAME)
#undef OSMP__STATUS_NAME
    }
    return "OSMP_UNKNOWN";
}

int osmp_version(int *major, int *minor, int *patch)
{
    if (major) *major = OSMP_VERSION_MAJOR;
    if (minor) *minor = OSMP_VERSION_MINOR;
    if (patch) *patch = OSMP_VERSION_PATCH;
    return OSMP_VERSION;
}
