/*
 * xmlcheck: refuse the hwloc XML inputs that make hwloc 2.9.0 (Debian 12) abort or crash instead of
 * failing the load. A topology file is outside input (osmp-run/osmp-topo --topology, OSMP_TOPOLOGY=FILE),
 * so a malformed one must end in an error the user can read, not in a core dump of their MPI job.
 *
 * The inputs known, all found by tests/fuzz/fuzz-xml (regressions/xml/hwloc-*), lstopo failing alike:
 *  - a bitmap attribute (cpuset, nodeset, complete_cpuset, ...) whose text starts with a comma:
 *    hwloc_bitmap_sscanf counts the commas after the first character, then fails `assert(count > 0)`
 *    on ",1". Every crashing string of up to 6 characters over ",0xf.1 -g" starts with a comma; none
 *    after the "0xf...f," prefix does (an exhaustive search).
 *    libxml2 expands character and entity references, so "&#44;1" reaches hwloc as ",1".
 *  - a bitmap hwloc cannot parse ("5x000000ff") on the root object while the file has text inside an
 *    object element: a NULL dereference in hwloc_topology_load with libxml2's import.
 *    So every bitmap attribute must be what hwloc writes: an optional "0xf...f" (infinite) word, then
 *    hex words with an optional 0x, separated by commas (empty for zero, but not the first). hwloc
 *    fails on any other text itself, except blanks or signs strtoul would skip, which no hwloc-written
 *    file has.
 *  - an object with a cpuset or nodeset but no complete_cpuset or complete_nodeset: hwloc dereferences
 *    the missing one (hwloc rejects such objects since open-mpi/hwloc#783).
 *  - a NUMANode without cpuset: hwloc checks a NUMA node for its nodeset, other objects for their
 *    cpuset, and dereferences the NUMA node's missing cpuset.
 *  - a DOCTYPE without a system identifier ("<!DOCTYPE topology>"): hwloc's libxml2 import compares
 *    the DTD's SystemID with "hwloc2.dtd" without checking it for NULL.
 *  - a first (root) object of another type than Machine ("NU" names a NUMA node), or with none of
 *    its cpuset's CPUs in its complete_cpuset and allowed_cpuset: "Topology became empty", then a
 *    NULL dereference.
 * And one that costs half a gigabyte: a PU or NUMA node without os_index (hwloc takes index 2^32 - 1) or
 * with a huge one sizes a bitmap for that index (2^32 bits), seconds per load and past libFuzzer's
 * timeout under ASan. Indices up to OSMP__XML_MAX_INDEX are taken (a bitmap of 128 KiB).
 *
 * The scan is lexical, not a validating parser: hwloc still decides whether the file is a topology.
 * It only has to see attributes the way hwloc will, so it skips comments, CDATA sections and
 * processing instructions (whose quotes and '<' are text), reads quoted values whole (a '>' inside
 * one does not end the tag), and leaves values and tags the file never closes to hwloc, which
 * refuses them.
 * Pure: the topo layer's helper, no processes, no shared memory.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/util.h"
#include "topo_internal.h"

static int name_char(char c)
{
    return isalnum((unsigned char)c) || c == '_' || c == '-' || c == ':' || c == '.';
}

static const char *skip_past(const char *p, const char *end, const char *marker)
{
    size_t len = strlen(marker);
    for (; p + len <= end; p++)
        if (memcmp(p, marker, len) == 0) return p + len;
    return end;
}

static int line_of(const char *text, const char *at)
{
    int line = 1;
    for (const char *p = text; p < at; p++) line += *p == '\n';
    return line;
}

static int is(const char *s, size_t len, const char *word)
{
    return strlen(word) == len && memcmp(s, word, len) == 0;
}

#define OSMP__XML_MAX_INDEX (1ul << 20)

/* Is [v, end) a bitmap as hwloc_bitmap_snprintf writes it? A word may be empty (hwloc writes a zero
 * word between two others that way), but not the first: that is the leading comma. */
static int bitmap_ok(const char *v, const char *end)
{
    int first = 1;
    if (end - v >= 7 && memcmp(v, "0xf...f", 7) == 0) {
        v += 7;
        if (v == end) return 1;
        if (*v++ != ',') return 0;
        first = 0;
    }
    for (;; first = 0) {
        if (end - v >= 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) v += 2;
        const char *digits = v;
        while (v < end && isxdigit((unsigned char)*v)) v++;
        if (first && v == digits) return 0;
        if (v == end) return 1;
        if (*v++ != ',') return 0;
    }
}

/* Does the DOCTYPE declaration from p name a system identifier (SYSTEM "x", or PUBLIC "y" "x")? Its
 * head ends at the internal subset's '[' or at '>'; quoted text is skipped. */
static int doctype_has_system_id(const char *p, const char *end)
{
    while (p < end && *p != '>' && *p != '[') {
        if (*p == '"' || *p == '\'') {
            const char *q = memchr(p + 1, *p, (size_t)(end - p - 1));
            p = q ? q + 1 : end;
            continue;
        }
        if ((size_t)(end - p) >= 6 && (memcmp(p, "SYSTEM", 6) == 0 || memcmp(p, "PUBLIC", 6) == 0)) return 1;
        p++;
    }
    return 0;
}

/* Does some CPU of the root's cpuset survive hwloc's restriction to its complete_cpuset and
 * allowed_cpuset (1; also when the cpuset is missing or empty: hwloc refuses those itself), or not
 * (0), or no memory (-1)? sets[k] = [from, to) of cpuset, complete_cpuset, allowed_cpuset, NULL if
 * absent; all passed bitmap_ok, so hwloc parses them. */
static int root_cpus_survive(const char *const sets[][2])
{
    hwloc_bitmap_t b[3] = {hwloc_bitmap_alloc(), hwloc_bitmap_alloc(), hwloc_bitmap_alloc()};
    int rc = -1;
    if (!b[0] || !b[1] || !b[2]) goto out;
    for (int k = 0; k < 3; k++) {
        if (!sets[k][0]) {
            hwloc_bitmap_fill(b[k]);
            continue;
        }
        size_t len = (size_t)(sets[k][1] - sets[k][0]);
        char *text = malloc(len + 1);
        if (!text) goto out;
        memcpy(text, sets[k][0], len);
        text[len] = '\0';
        int bad = hwloc_bitmap_sscanf(b[k], text) < 0;
        free(text);
        if (bad) goto out;
    }
    int empty = !sets[0][0] || hwloc_bitmap_iszero(b[0]);
    hwloc_bitmap_and(b[0], b[0], b[1]);
    hwloc_bitmap_and(b[0], b[0], b[2]);
    rc = empty || !hwloc_bitmap_iszero(b[0]);
out:
    hwloc_bitmap_free(b[0]);
    hwloc_bitmap_free(b[1]);
    hwloc_bitmap_free(b[2]);
    return rc;
}

/* The hwloc type the quoted type [v, end) names, -1 if none. */
static int type_of(const char *v, const char *end)
{
    char name[32];
    size_t len = (size_t)(end - v);
    hwloc_obj_type_t type;
    if (len >= sizeof(name)) return -1;
    if (len == 6 && strncasecmp(v, "System", 6) == 0) return HWLOC_OBJ_MACHINE; /* hwloc 1.x's root */
    memcpy(name, v, len);
    name[len] = '\0';
    return hwloc_type_sscanf(name, &type, NULL, 0) == 0 ? (int)type : -1;
}

int osmp__xml_check(const char *text, size_t size, char *why, size_t whylen)
{
    const char *p = text, *end = text + size;
    int objects = 0;
    while (p < end) {
        if (*p != '<') {
            p++;
            continue;
        }
        if ((size_t)(end - p) >= 4 && memcmp(p, "<!--", 4) == 0) {
            p = skip_past(p + 4, end, "-->");
            continue;
        }
        if ((size_t)(end - p) >= 9 && memcmp(p, "<![CDATA[", 9) == 0) {
            p = skip_past(p + 9, end, "]]>");
            continue;
        }
        if ((size_t)(end - p) >= 2 && memcmp(p, "<?", 2) == 0) { /* a processing instruction, quotes and all */
            p = skip_past(p + 2, end, "?>");
            continue;
        }
        if ((size_t)(end - p) >= 9 && memcmp(p, "<!DOCTYPE", 9) == 0 && !doctype_has_system_id(p + 9, end)) {
            osmp__why(why, whylen, "line %d: a DOCTYPE without SYSTEM \"hwloc2.dtd\" (hwloc crashes on it)",
                      line_of(text, p));
            return -1;
        }
        const char *element = ++p;
        while (p < end && name_char(*p)) p++;
        int object = is(element, (size_t)(p - element), "object");
        int type = -1;
        /* [from, to) of each set attribute the tag has, NULL if none */
        enum { CPUSET, COMPLETE_CPUSET, ALLOWED_CPUSET, NODESET, COMPLETE_NODESET, NSETS };
        static const char *const set_names[NSETS] = {"cpuset", "complete_cpuset", "allowed_cpuset", "nodeset",
                                                      "complete_nodeset"};
        const char *os_index = NULL, *sets[NSETS][2] = {{NULL, NULL}};
        while (p < end && *p != '>') {
            if (*p == '"' || *p == '\'') { /* a quote outside a value: skip what it encloses */
                const char *q = memchr(p + 1, *p, (size_t)(end - p - 1));
                p = q ? q + 1 : end;
                continue;
            }
            if (!name_char(*p)) {
                p++;
                continue;
            }
            const char *attr = p;
            while (p < end && name_char(*p)) p++;
            size_t alen = (size_t)(p - attr);
            while (p < end && isspace((unsigned char)*p)) p++;
            if (p == end || *p != '=') continue;
            p++;
            while (p < end && isspace((unsigned char)*p)) p++;
            if (p == end || (*p != '"' && *p != '\'')) continue;
            const char *value = p + 1, *close = memchr(value, *p, (size_t)(end - value));
            if (!close) close = end;
            p = close < end ? close + 1 : end;
            if (alen >= 3 && memcmp(attr + alen - 3, "set", 3) == 0 && close < end && !bitmap_ok(value, close)) {
                osmp__why(why, whylen, "line %d: %.*s is not a bitmap of hex words separated by commas (hwloc may "
                          "crash on it)", line_of(text, attr), (int)(alen > 32 ? 32 : alen), attr);
                return -1;
            }
            if (close < end && is(attr, alen, "type")) type = type_of(value, close);
            if (close < end && is(attr, alen, "os_index")) os_index = value;
            for (int k = 0; k < NSETS && close < end; k++)
                if (is(attr, alen, set_names[k])) sets[k][0] = value, sets[k][1] = close;
        }
        int no_complete_cpuset = sets[CPUSET][0] && !sets[COMPLETE_CPUSET][0];
        if (object && p < end && (no_complete_cpuset || (sets[NODESET][0] && !sets[COMPLETE_NODESET][0]))) {
            const char *set = no_complete_cpuset ? "cpuset" : "nodeset";
            osmp__why(why, whylen, "line %d: an object with a %s but no complete_%s (hwloc crashes on it)",
                      line_of(text, element), set, set);
            return -1;
        }
        if (object && p < end && !objects++) {
            if (type != HWLOC_OBJ_MACHINE) {
                osmp__why(why, whylen, "line %d: the first object is not the Machine (hwloc may crash on it)",
                          line_of(text, element));
                return -1;
            }
            int survive = root_cpus_survive(sets);
            if (survive < 0) {
                osmp__why(why, whylen, "out of memory");
                return -1;
            }
            if (!survive) {
                osmp__why(why, whylen, "line %d: no CPU of the Machine's cpuset is in its complete_cpuset and "
                          "allowed_cpuset (hwloc may crash on it)", line_of(text, element));
                return -1;
            }
        }
        if (object && p < end && type == HWLOC_OBJ_NUMANODE && !sets[CPUSET][0]) {
            osmp__why(why, whylen, "line %d: a NUMANode without cpuset (hwloc crashes on it)", line_of(text, element));
            return -1;
        }
        int indexed = type == HWLOC_OBJ_PU || type == HWLOC_OBJ_NUMANODE;
        if (object && p < end && indexed && (!os_index || strtoul(os_index, NULL, 10) > OSMP__XML_MAX_INDEX)) {
            if (os_index)
                osmp__why(why, whylen, "line %d: a PU or NUMANode with an os_index above %lu (hwloc would size "
                          "bitmaps for it)", line_of(text, element), OSMP__XML_MAX_INDEX);
            else
                osmp__why(why, whylen, "line %d: a PU or NUMANode without os_index (hwloc would size bitmaps for it)",
                          line_of(text, element));
            return -1;
        }
    }
    return 0;
}
