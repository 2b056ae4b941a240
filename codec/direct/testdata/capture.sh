#!/bin/sh
# capture.sh regenerates the sqld fixtures in this directory.
# Usage: ./capture.sh [base-url]   (default http://127.0.0.1:18080)
# Recorded against sqld 0.24.32 (40c272de 2025-02-14). Statements that write
# run inside transactions that are rolled back.
set -eu
B=${1:-http://127.0.0.1:18080}
cd "$(dirname "$0")"

# Every value type, text needing escapes, +Inf (sent as null), integral and
# negative-zero floats, extreme integers, and an empty result.
curl -sS "$B/v3/pipeline" -o pipeline_values.json -d '{"baton":null,"requests":[
 {"type":"execute","stmt":{"sql":"select 1 as i, 1.5 as f, 2.0 as fi, -0.0 as nz, 9e999 as inf, -9e999 as ninf, 9223372036854775807 as maxi, -9223372036854775808 as mini, null as n, x'"'"'fbff'"'"' as b, x'"'"''"'"' as eb, '"'"'h\u00e9llo \"q\" \\ / \t'"'"' || char(10) || char(1) || char(127) || '"'"' \ud83d\ude00 \u2028'"'"' as t, '"'"''"'"' as et","want_rows":true}},
 {"type":"execute","stmt":{"sql":"select ?1 as a, :b as b, 1e300*10 as big, 1.0/3 as third","args":[{"type":"text","value":"x"}],"want_rows":true}},
 {"type":"execute","stmt":{"sql":"select 1 where 0"}},
 {"type":"close"}]}'

# Named args, a batch with conditions (ok, failed, skipped steps), describe,
# sequence, store_sql / close_sql, get_autocommit, statement errors. All of it
# runs inside a transaction that is rolled back, so the server's database is
# left as it was.
curl -sS "$B/v3/pipeline" -o pipeline_batch.json -d '{"requests":[
 {"type":"execute","stmt":{"sql":"begin"}},
 {"type":"sequence","sql":"create table zz_direct_fixture(a integer primary key, b text unique, c real, d blob); create index zz_direct_fixture_c on zz_direct_fixture(c)"},
 {"type":"store_sql","sql_id":1,"sql":"insert into zz_direct_fixture(b,c,d) values (:b, @c, $d)"},
 {"type":"execute","stmt":{"sql_id":1,"named_args":[{"name":":b","value":{"type":"text","value":"one"}},{"name":"c","value":{"type":"float","value":1}},{"name":"$d","value":{"type":"blob","base64":"AAEC/w"}}]}},
 {"type":"batch","batch":{"steps":[
   {"stmt":{"sql":"insert into zz_direct_fixture(b) values (?)","args":[{"type":"text","value":"two"}]}},
   {"condition":{"type":"ok","step":0},"stmt":{"sql":"insert into zz_direct_fixture(b) values (?)","args":[{"type":"text","value":"one"}]}},
   {"condition":{"type":"and","conds":[{"type":"ok","step":1},{"type":"not","cond":{"type":"is_autocommit"}}]},"stmt":{"sql":"select 1"}},
   {"condition":{"type":"not","cond":{"type":"ok","step":1}},"stmt":{"sql":"select count(*) as n from zz_direct_fixture"}},
   {"condition":{"type":"or","conds":[]},"stmt":{"sql":"select 1"}},
   {"stmt":{"sql":"select a, b, c, d from zz_direct_fixture order by a"}}]}},
 {"type":"get_autocommit"},
 {"type":"describe","sql":"select a, b, c + 1 as e from zz_direct_fixture where a = ? and b = :name"},
 {"type":"execute","stmt":{"sql":"select * from nonexistent"}},
 {"type":"execute","stmt":{"sql":"selec 1"}},
 {"type":"execute","stmt":{"sql":"insert into zz_direct_fixture(b) values (?)","args":[{"type":"text","value":"three"}],"want_rows":false}},
 {"type":"close_sql","sql_id":1},
 {"type":"execute","stmt":{"sql":"rollback"}},
 {"type":"close"}]}'

# A 1000-row result, used by the benchmarks and allocation tests.
curl -sS "$B/v3/pipeline" -o pipeline_1000rows.json -d '{"requests":[
 {"type":"execute","stmt":{"sql":"with recursive r(i) as (select 1 union all select i+1 from r where i < 1000) select i as id, '"'"'name-'"'"' || i as name, i * 1.25 as score, case when i % 10 = 0 then null else i * 7 end as maybe from r"}},
 {"type":"close"}]}'

# The cursor (NDJSON) form of a batch with an ok step, a row step, a failed
# step, a skipped step and a binding error after step_begin, again inside a
# transaction that is rolled back.
curl -sS "$B/v3/cursor" -o cursor.ndjson -d '{"baton":null,"batch":{"steps":[
 {"stmt":{"sql":"begin"}},
 {"stmt":{"sql":"create table zz_direct_cursor(a integer, b)"}},
 {"stmt":{"sql":"insert into zz_direct_cursor values (1, '"'"'x\\n'"'"' || char(10)), (2, x'"'"'00ff'"'"')"}},
 {"stmt":{"sql":"select a, b, 1.5 as f, null as n from zz_direct_cursor"}},
 {"condition":{"type":"not","cond":{"type":"ok","step":3}},"stmt":{"sql":"select 1"}},
 {"stmt":{"sql":"select * from nonexistent"}},
 {"stmt":{"sql":"select ?","args":[{"type":"integer","value":"1"},{"type":"integer","value":"2"}]}},
 {"stmt":{"sql":"rollback"}}]}}'
