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

static const fl_api_info_t fl_api_own_infos[] = {
#define FL_API_INFO_(name, key, lo, hi, roles) {key, lo, hi, roles, #name},
    FL_API_OWN_TABLE(FL_API_INFO_)
#undef FL_API_INFO_
};

const fl_api_info_t *fl_api_info(int key) {
    for (size_t i = 0; i < sizeof(fl_api_own_infos) / sizeof(fl_api_own_infos[0]); i++)
        if (fl_api_own_infos[i].key == key) return &fl_api_own_infos[i];
    if (key < FL_API_KEY_MIN || key > FL_API_KEY_MAX) return NULL;
    const fl_api_info_t *info = &fl_api_infos[key - FL_API_KEY_MIN];
    return info->key == key ? info : NULL;
}
