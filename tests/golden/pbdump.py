#!/usr/bin/env python3
"""Plain-text dump of recorded Fluss RPC frames (stdlib only, no generated code).

    python3 tests/golden/pbdump.py FILE.req.bin [FILE.resp.bin ...]

Each .bin file holds exactly one frame as it crossed the wire, including the
4-byte big-endian length prefix.  Requests: int16 api_key, int16 api_version,
int32 request_id, protobuf.  Responses: int8 type (0 success, 1 error,
2 server failure), int32 request_id (absent for type 2), protobuf.

The protobuf body is decoded generically (field number, wire type, value).
For the messages listed in MESSAGES below the field names and types are
known (written from the field tables in shared/reference/protocol.md and
checked against the reference server's frames); other messages are decoded
heuristically (printable UTF-8 -> string, else a nested message if it parses,
else hex).  JSON payloads (table_json, database_json, schema_json) are
printed verbatim, byte for byte, followed by an indented copy.
"""
import json
import struct
import sys

API_NAMES = {
    1000: "API_VERSIONS", 1001: "CREATE_DATABASE", 1002: "DROP_DATABASE",
    1003: "LIST_DATABASES", 1004: "DATABASE_EXISTS", 1005: "CREATE_TABLE",
    1006: "DROP_TABLE", 1007: "GET_TABLE_INFO", 1008: "LIST_TABLES",
    1009: "LIST_PARTITION_INFOS", 1010: "TABLE_EXISTS", 1011: "GET_TABLE_SCHEMA",
    1012: "GET_METADATA", 1013: "UPDATE_METADATA", 1014: "PRODUCE_LOG",
    1015: "FETCH_LOG", 1016: "PUT_KV", 1017: "LOOKUP",
    1018: "NOTIFY_LEADER_AND_ISR", 1019: "STOP_REPLICA", 1020: "ADJUST_ISR",
    1021: "LIST_OFFSETS", 1022: "COMMIT_KV_SNAPSHOT",
    1023: "GET_LATEST_KV_SNAPSHOTS", 1024: "GET_KV_SNAPSHOT_METADATA",
    1025: "GET_FILESYSTEM_SECURITY_TOKEN", 1026: "INIT_WRITER",
    1027: "COMMIT_REMOTE_LOG_MANIFEST", 1028: "NOTIFY_REMOTE_LOG_OFFSETS",
    1029: "NOTIFY_KV_SNAPSHOT_OFFSET", 1030: "COMMIT_LAKE_TABLE_SNAPSHOT",
    1031: "NOTIFY_LAKE_TABLE_OFFSET", 1032: "GET_LAKE_SNAPSHOT",
    1033: "LIMIT_SCAN", 1034: "PREFIX_LOOKUP", 1035: "GET_DATABASE_INFO",
    1036: "CREATE_PARTITION", 1037: "DROP_PARTITION", 1038: "AUTHENTICATE",
    1039: "CREATE_ACLS", 1040: "LIST_ACLS", 1041: "DROP_ACLS",
    1042: "LAKE_TIERING_HEARTBEAT", 1043: "CONTROLLED_SHUTDOWN",
    1044: "ALTER_TABLE", 1045: "DESCRIBE_CLUSTER_CONFIGS",
    1046: "ALTER_CLUSTER_CONFIGS", 1047: "ADD_SERVER_TAG",
    1048: "REMOVE_SERVER_TAG", 1049: "REBALANCE",
    1050: "LIST_REBALANCE_PROGRESS", 1051: "CANCEL_REBALANCE",
    1052: "PREPARE_LAKE_TABLE_SNAPSHOT", 1053: "REGISTER_PRODUCER_OFFSETS",
    1054: "GET_PRODUCER_OFFSETS", 1055: "DELETE_PRODUCER_OFFSETS",
    1056: "ACQUIRE_KV_SNAPSHOT_LEASE", 1057: "RELEASE_KV_SNAPSHOT_LEASE",
    1058: "DROP_KV_SNAPSHOT_LEASE", 1059: "GET_TABLE_STATS",
    1060: "ALTER_DATABASE", 1061: "SCAN_KV", 1062: "GET_CLUSTER_HEALTH",
    1063: "LIST_REMOTE_LOG_MANIFESTS", 1064: "LIST_KV_SNAPSHOTS",
}

ERROR_NAMES = {
    -1: "UNKNOWN_SERVER_ERROR", 0: "NONE", 1: "NETWORK_EXCEPTION",
    2: "UNSUPPORTED_VERSION", 3: "CORRUPT_MESSAGE", 4: "DATABASE_NOT_EXIST",
    5: "DATABASE_NOT_EMPTY", 6: "DATABASE_ALREADY_EXIST", 7: "TABLE_NOT_EXIST",
    8: "TABLE_ALREADY_EXIST", 9: "SCHEMA_NOT_EXIST", 15: "INVALID_TABLE_EXCEPTION",
    16: "INVALID_DATABASE_EXCEPTION", 17: "INVALID_REPLICATION_FACTOR",
    36: "PARTITION_NOT_EXISTS", 42: "PARTITION_ALREADY_EXISTS",
}

# Field type codes: i32 i64 bool str bytes json, "m:Name" nested message;
# a trailing "*" marks a repeated field.
MESSAGES = {
    "ErrorResponse": {1: ("error_code", "i32"), 2: ("error_message", "str")},
    "ApiVersionsRequest": {1: ("client_software_name", "str"),
                           2: ("client_software_version", "str")},
    "ApiVersionsResponse": {1: ("api_versions", "m:PbApiVersion*"),
                            2: ("server_type", "i32")},
    "PbApiVersion": {1: ("api_key", "i32"), 2: ("min_version", "i32"),
                     3: ("max_version", "i32")},
    "PbTablePath": {1: ("database_name", "str"), 2: ("table_name", "str")},
    "PbPhysicalTablePath": {1: ("database_name", "str"), 2: ("table_name", "str"),
                            3: ("partition_name", "str")},
    "PbServerNode": {1: ("node_id", "i32"), 2: ("host", "str"), 3: ("port", "i32"),
                     4: ("listeners", "str"), 5: ("rack", "str")},
    "PbTableMetadata": {1: ("table_path", "m:PbTablePath"), 2: ("table_id", "i64"),
                        3: ("schema_id", "i32"), 4: ("table_json", "json"),
                        5: ("bucket_metadata", "m:PbBucketMetadata*"),
                        6: ("created_time", "i64"), 7: ("modified_time", "i64"),
                        8: ("remote_data_dir", "str")},
    "PbPartitionMetadata": {1: ("table_id", "i64"), 2: ("partition_name", "str"),
                            3: ("partition_id", "i64"),
                            4: ("bucket_metadata", "m:PbBucketMetadata*")},
    "PbBucketMetadata": {1: ("bucket_id", "i32"), 2: ("leader_id", "i32"),
                         3: ("replica_id", "i32*"), 4: ("leader_epoch", "i32")},
    "PbKeyValue": {1: ("key", "str"), 2: ("value", "str")},
    "PbPartitionSpec": {1: ("partition_key_values", "m:PbKeyValue*")},
    "PbPartitionInfo": {1: ("partition_id", "i64"), 2: ("partition_spec", "m:PbPartitionSpec"),
                        3: ("remote_data_dir", "str")},
    "PbDatabaseSummary": {1: ("database_name", "str"), 2: ("created_time", "i64"),
                          3: ("table_count", "i32")},
    "MetadataRequest": {1: ("table_path", "m:PbTablePath*"),
                        2: ("partitions_path", "m:PbPhysicalTablePath*"),
                        3: ("partitions_id", "i64*")},
    "MetadataResponse": {1: ("coordinator_server", "m:PbServerNode"),
                         2: ("tablet_servers", "m:PbServerNode*"),
                         3: ("table_metadata", "m:PbTableMetadata*"),
                         4: ("partition_metadata", "m:PbPartitionMetadata*")},
    "CreateDatabaseRequest": {1: ("database_name", "str"), 2: ("ignore_if_exists", "bool"),
                              3: ("database_json", "json")},
    "DropDatabaseRequest": {1: ("database_name", "str"), 2: ("ignore_if_not_exists", "bool"),
                            3: ("cascade", "bool")},
    "ListDatabasesRequest": {1: ("include_summary", "bool")},
    "ListDatabasesResponse": {1: ("database_name", "str*"),
                              2: ("database_summary", "m:PbDatabaseSummary*")},
    "DatabaseExistsRequest": {1: ("database_name", "str")},
    "DatabaseExistsResponse": {1: ("exists", "bool")},
    "GetDatabaseInfoRequest": {1: ("database_name", "str")},
    "GetDatabaseInfoResponse": {3: ("database_json", "json"), 4: ("created_time", "i64"),
                                5: ("modified_time", "i64")},
    "CreateTableRequest": {1: ("table_path", "m:PbTablePath"), 2: ("table_json", "json"),
                           3: ("ignore_if_exists", "bool")},
    "DropTableRequest": {1: ("table_path", "m:PbTablePath"), 2: ("ignore_if_not_exists", "bool")},
    "GetTableInfoRequest": {1: ("table_path", "m:PbTablePath")},
    "GetTableInfoResponse": {1: ("table_id", "i64"), 2: ("schema_id", "i32"),
                             3: ("table_json", "json"), 4: ("created_time", "i64"),
                             5: ("modified_time", "i64"), 6: ("remote_data_dir", "str")},
    "ListTablesRequest": {1: ("database_name", "str")},
    "ListTablesResponse": {1: ("table_name", "str*")},
    "TableExistsRequest": {1: ("table_path", "m:PbTablePath")},
    "TableExistsResponse": {1: ("exists", "bool")},
    "GetTableSchemaRequest": {1: ("table_path", "m:PbTablePath"), 2: ("schema_id", "i32")},
    "GetTableSchemaResponse": {1: ("schema_id", "i32"), 2: ("schema_json", "json")},
    "ListPartitionInfosRequest": {1: ("table_path", "m:PbTablePath"),
                                  2: ("partial_partition_spec", "m:PbPartitionSpec")},
    "ListPartitionInfosResponse": {1: ("partitions_info", "m:PbPartitionInfo*")},
    "CreatePartitionRequest": {1: ("table_path", "m:PbTablePath"),
                               2: ("partition_spec", "m:PbPartitionSpec"),
                               3: ("ignore_if_not_exists", "bool")},
    "DropPartitionRequest": {1: ("table_path", "m:PbTablePath"),
                             2: ("partition_spec", "m:PbPartitionSpec"),
                             3: ("ignore_if_not_exists", "bool")},
    "InitWriterRequest": {1: ("table_path", "m:PbTablePath*")},
    "InitWriterResponse": {1: ("writer_id", "i64")},
    "ListOffsetsRequest": {1: ("follower_server_id", "i32"), 2: ("offset_type", "i32"),
                           3: ("table_id", "i64"), 4: ("partition_id", "i64"),
                           5: ("bucket_id", "i32*"), 6: ("startTimestamp", "i64")},
    "ListOffsetsResponse": {1: ("buckets_resp", "m:PbListOffsetsRespForBucket*")},
    "PbListOffsetsRespForBucket": {1: ("bucket_id", "i32"), 2: ("error_code", "i32"),
                                   3: ("error_message", "str"), 4: ("offset", "i64")},
    "EmptyResponse": {},
}

API_MESSAGES = {  # api_key -> (request message, success response message)
    1000: ("ApiVersionsRequest", "ApiVersionsResponse"),
    1001: ("CreateDatabaseRequest", "EmptyResponse"),
    1002: ("DropDatabaseRequest", "EmptyResponse"),
    1003: ("ListDatabasesRequest", "ListDatabasesResponse"),
    1004: ("DatabaseExistsRequest", "DatabaseExistsResponse"),
    1005: ("CreateTableRequest", "EmptyResponse"),
    1006: ("DropTableRequest", "EmptyResponse"),
    1007: ("GetTableInfoRequest", "GetTableInfoResponse"),
    1008: ("ListTablesRequest", "ListTablesResponse"),
    1009: ("ListPartitionInfosRequest", "ListPartitionInfosResponse"),
    1010: ("TableExistsRequest", "TableExistsResponse"),
    1011: ("GetTableSchemaRequest", "GetTableSchemaResponse"),
    1012: ("MetadataRequest", "MetadataResponse"),
    1021: ("ListOffsetsRequest", "ListOffsetsResponse"),
    1026: ("InitWriterRequest", "InitWriterResponse"),
    1035: ("GetDatabaseInfoRequest", "GetDatabaseInfoResponse"),
    1036: ("CreatePartitionRequest", "EmptyResponse"),
    1037: ("DropPartitionRequest", "EmptyResponse"),
}

WIRE_NAMES = {0: "varint", 1: "fixed64", 2: "len", 5: "fixed32"}


def uvarint(buf, i):
    shift = value = 0
    while True:
        if i >= len(buf):
            raise ValueError("truncated varint")
        b = buf[i]
        i += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, i
        shift += 7
        if shift > 70:
            raise ValueError("varint too long")


def raw_fields(buf):
    """List of (field_number, wire_type, value, raw_varint_len) of a message."""
    out = []
    i = 0
    while i < len(buf):
        key, i = uvarint(buf, i)
        num, wt = key >> 3, key & 7
        if num == 0:
            raise ValueError("field number 0")
        start = i
        if wt == 0:
            v, i = uvarint(buf, i)
        elif wt == 1:
            if i + 8 > len(buf):
                raise ValueError("truncated fixed64")
            v, i = buf[i:i + 8], i + 8
        elif wt == 2:
            n, i = uvarint(buf, i)
            if i + n > len(buf):
                raise ValueError("truncated length-delimited field")
            v, i = buf[i:i + n], i + n
        elif wt == 5:
            if i + 4 > len(buf):
                raise ValueError("truncated fixed32")
            v, i = buf[i:i + 4], i + 4
        else:
            raise ValueError("bad wire type %d" % wt)
        out.append((num, wt, v, i - start))
    return out


def signed(v, bits):
    v &= (1 << 64) - 1
    if v >= 1 << 63:
        v -= 1 << 64
    if bits == 32:
        v = ((v + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)
    return v


def printable(b):
    try:
        s = b.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if s and all(c.isprintable() or c in "\t" for c in s):
        return s
    return None


def fmt_time(ms):
    import datetime
    try:
        return datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc).strftime(
            "%Y-%m-%dT%H:%M:%S.%fZ")[:-4] + "Z"
    except (OverflowError, OSError, ValueError):
        return "?"


def dump_message(buf, msg_name, indent, lines):
    pad = "  " * indent
    try:
        fields = raw_fields(buf)
    except ValueError as e:
        lines.append("%s!! cannot parse as protobuf (%s): %s" % (pad, e, buf.hex()))
        return
    schema = MESSAGES.get(msg_name) if msg_name else None
    for num, wt, v, vlen in fields:
        name, ftype = (schema.get(num) if schema else None) or ("?", None)
        head = "%s%d %s [%s]" % (pad, num, name, WIRE_NAMES[wt])
        base = ftype.rstrip("*") if ftype else None
        if base and base.startswith("m:") and wt == 2:
            sub = []
            dump_message(v, base[2:], 0, sub)
            if 0 < len(sub) <= 4 and all(" [varint] = " in x for x in sub):
                # small all-integer message (PbApiVersion, PbBucketMetadata...): one line
                inline = ", ".join(x.split(" ", 1)[1].replace(" [varint] = ", "=")
                                   for x in sub)
                lines.append("%s = {%s}  # %s, %d bytes" % (head, inline, base[2:], len(v)))
            else:
                lines.append("%s {  # %s, %d bytes" % (head, base[2:], len(v)))
                dump_message(v, base[2:], indent + 1, lines)
                lines.append("%s}" % pad)
        elif wt == 0:
            extra = ""
            if base in ("i32", "i64"):
                sv = signed(v, 32 if base == "i32" else 64)
                extra = "" if sv == v else "  (raw varint %d)" % v
                v = sv
                if name == "error_code":
                    extra += "  (%s)" % ERROR_NAMES.get(v, "see protocol.md §7")
                elif name.endswith("_time") and v > 10 ** 11:
                    extra += "  (%s)" % fmt_time(v)
                elif name == "api_key":
                    extra += "  (%s)" % API_NAMES.get(v, "?")
                elif name == "server_type":
                    extra += "  (%s)" % {1: "COORDINATOR", 2: "TABLET_SERVER"}.get(v, "?")
            elif base == "bool":
                extra = "  (%s)" % ("true" if v == 1 else "false" if v == 0 else "?")
            elif base is None and v >= 1 << 63:
                extra = "  (as int64: %d)" % signed(v, 64)
            if v < 0:
                extra += "  [%d-byte varint]" % vlen
            lines.append("%s = %d%s" % (head, v, extra))
        elif wt == 2 and ftype in ("i32*", "i64*"):
            vals = []
            j = 0
            try:
                while j < len(v):
                    x, j = uvarint(v, j)
                    vals.append(signed(x, 32 if ftype.startswith("i32") else 64))
                lines.append("%s = packed %s" % (head, vals))
            except ValueError:
                lines.append("%s = bad packed data %s" % (head, v.hex()))
        elif wt == 2 and base == "json":
            text = v.decode("utf-8", "replace")
            lines.append("%s = %d bytes of JSON, verbatim:" % (head, len(v)))
            lines.append("%s    %s" % (pad, text))
            try:
                pretty = json.dumps(json.loads(text), indent=2, ensure_ascii=False)
                lines.append("%s  indented copy:" % pad)
                for pl in pretty.splitlines():
                    lines.append("%s    %s" % (pad, pl))
            except ValueError:
                lines.append("%s  (not valid JSON)" % pad)
        elif wt == 2 and base == "str":
            lines.append("%s = %s" % (head, json.dumps(v.decode("utf-8", "replace"),
                                                      ensure_ascii=False)))
        elif wt == 2 and base == "bytes":
            lines.append("%s = %d bytes: %s" % (head, len(v), v.hex()))
        elif wt == 2:
            s = printable(v)
            if s is not None or len(v) == 0:
                lines.append("%s = %s" % (head, json.dumps(s or "", ensure_ascii=False)))
            else:
                try:
                    raw_fields(v)
                    lines.append("%s {  # unknown message, %d bytes" % (head, len(v)))
                    dump_message(v, None, indent + 1, lines)
                    lines.append("%s}" % pad)
                except ValueError:
                    lines.append("%s = %d bytes: %s" % (head, len(v), v.hex()))
        else:
            lines.append("%s = %s (LE int %d)" % (head, v.hex(), int.from_bytes(v, "little")))


def parse_frame(data):
    """Return (length, payload) of a length-prefixed frame."""
    if len(data) < 4:
        raise ValueError("short frame")
    (length,) = struct.unpack(">i", data[:4])
    return length, data[4:]


def dump_request(data, lines):
    length, p = parse_frame(data)
    api_key, ver, rid = struct.unpack(">hhi", p[:8])
    api = API_NAMES.get(api_key, "?")
    lines.append("REQUEST  frame_length=%d api_key=%d (%s) api_version=%d request_id=%d "
                 "body=%d bytes" % (length, api_key, api, ver, rid, len(p) - 8))
    lines.append("  header bytes: %s | %s" % (data[:4].hex(" "), p[:8].hex(" ")))
    dump_message(p[8:], API_MESSAGES.get(api_key, (None, None))[0], 1, lines)
    return api_key


def dump_response(data, lines, api_key=None):
    length, p = parse_frame(data)
    rtype = p[0]
    if rtype == 2:
        lines.append("RESPONSE frame_length=%d type=2 (SERVER_FAILURE, no request id) body=%d bytes"
                     % (length, len(p) - 1))
        lines.append("  header bytes: %s | %s" % (data[:4].hex(" "), p[:1].hex(" ")))
        dump_message(p[1:], "ErrorResponse", 1, lines)
        return
    (rid,) = struct.unpack(">i", p[1:5])
    tname = {0: "SUCCESS", 1: "ERROR"}.get(rtype, "?")
    lines.append("RESPONSE frame_length=%d type=%d (%s) request_id=%d body=%d bytes"
                 % (length, rtype, tname, rid, len(p) - 5))
    lines.append("  header bytes: %s | %s" % (data[:4].hex(" "), p[:5].hex(" ")))
    if rtype == 1:
        msg = "ErrorResponse"
    else:
        msg = API_MESSAGES.get(api_key, (None, None))[1]
    if len(p) == 5:
        lines.append("  (empty body)")
    dump_message(p[5:], msg, 1, lines)


def dump_pair(req_bytes, resp_bytes):
    lines = []
    api_key = dump_request(req_bytes, lines)
    lines.append("")
    if resp_bytes is None:
        lines.append("RESPONSE (none recorded)")
    else:
        dump_response(resp_bytes, lines, api_key)
    return "\n".join(lines) + "\n"


def main(argv):
    if not argv:
        print(__doc__)
        return 2
    last_key = None
    for path in argv:
        with open(path, "rb") as f:
            data = f.read()
        lines = ["== %s" % path]
        if path.endswith(".req.bin"):
            last_key = dump_request(data, lines)
        else:
            key = last_key
            if key is None and path.endswith(".resp.bin"):
                try:
                    with open(path[:-len(".resp.bin")] + ".req.bin", "rb") as f:
                        key = struct.unpack(">h", f.read()[4:6])[0]
                except OSError:
                    pass
            dump_response(data, lines, key)
        print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
