/*
 * proto_api.c — lookup into the API key table of proto_api.h.
 */
#include "proto_api.h"

#include <stddef.h>

static const fl_api_info_t fl_api_infos[] = {
#define FL_API_INFO_(name, key, lo, hi, roles) {key, lo, hi, roles, #name},
    FL_API_TABLE(FL_API_INFO_)
#undef FL_API_INFO_
};

const fl_api_info_t *fl_api_info(int key) {
    if (key < FL_API_KEY_MIN || key > FL_API_KEY_MAX) return NULL;
    const fl_api_info_t *info = &fl_api_infos[key - FL_API_KEY_MIN];
    return info->key == key ? info : NULL;
}
