-- wrk script for `python -m bench http`: POST tools/call echo over Streamable HTTP.
--
-- Arguments (after `--`): SESSIONS THREADS TEXT [WINDOW_START WINDOW_END]
--   SESSIONS  a file with one Mcp-Session-Id per line, or "-" (stateless: no header), or
--             "2026-07-28" (no session: each call a 2026-07-28 request, with _meta in its
--             params and its MCP-Protocol-Version, Mcp-Method and Mcp-Name headers)
--   THREADS   wrk's thread count; session i goes to thread i % THREADS, and each thread
--             uses its own sessions in turn, one per request (with as many sessions as
--             connections, about one request is in flight per session)
--   TEXT      the text to echo; every answer must be 200 and contain it, JSON-quoted
--   WINDOW_*  CLOCK_MONOTONIC times in ns: answers completed in [start, end) are counted
--             apart ("window"), so that the harness can read the server's CPU time at
--             the same two instants and leave out the ramp-up and the requests still in
--             flight when wrk stops
--
-- Request ids are unique per run (thread * 1e9 + sequence number), since a session may
-- not have two requests in flight with the same id. Requests are assembled from strings
-- prepared in init(). done() prints one line "WRKJSON {...}" with the summary, the
-- latency percentiles and the checked counts, and "WRKBAD ..." with the first bad answer.

local ffi = require("ffi")
ffi.cdef([[
typedef struct { long tv_sec; long tv_nsec; } bench_timespec;
int clock_gettime(int clk_id, bench_timespec *tp);
]])
local timespec = ffi.new("bench_timespec")

local function monotonic_ns()
  ffi.C.clock_gettime(1, timespec) -- CLOCK_MONOTONIC, as Python's time.monotonic_ns()
  return tonumber(timespec.tv_sec) * 1e9 + tonumber(timespec.tv_nsec)
end

local threads = {}
local next_tid = 0

function setup(thread)
  thread:set("tid", next_tid)
  next_tid = next_tid + 1
  table.insert(threads, thread)
end

local prefixes = {}
local count = 0
local turn = 0
local seq = 0
local body_head, body_tail
local expect
local window_start, window_end

function init(args)
  local sessions_file, nthreads, text = args[1], tonumber(args[2]), args[3]
  window_start, window_end = tonumber(args[4] or "0"), tonumber(args[5] or "0")
  local host = wrk.headers["Host"] or (wrk.host .. ":" .. tostring(wrk.port))
  local modern = sessions_file == "2026-07-28"
  local common = "POST " .. wrk.path .. " HTTP/1.1\r\n"
    .. "Host: " .. host .. "\r\n"
    .. "Accept: application/json, text/event-stream\r\n"
    .. "Content-Type: application/json\r\n"
    .. "MCP-Protocol-Version: " .. (modern and "2026-07-28" or "2025-11-25") .. "\r\n"
  if modern then
    prefixes[1] = common .. "Mcp-Method: tools/call\r\nMcp-Name: echo\r\n"
  elseif sessions_file == "-" then
    prefixes[1] = common
  else
    local i = 0
    for line in io.lines(sessions_file) do
      if line ~= "" then
        if i % nthreads == tid then
          prefixes[#prefixes + 1] = common .. "Mcp-Session-Id: " .. line .. "\r\n"
        end
        i = i + 1
      end
    end
  end
  count = #prefixes
  body_head = '{"jsonrpc":"2.0","id":'
  local meta = ""
  if modern then
    meta = ',"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
      .. '"io.modelcontextprotocol/clientCapabilities":{}}'
  end
  body_tail = ',"method":"tools/call","params":{"name":"echo","arguments":{"text":"'
    .. text .. '"}' .. meta .. '}}'
  expect = '"' .. text .. '"'
  seq = tid * 1000000000
  ok = 0
  bad = 0
  in_window = 0
  first_bad = nil
end

function request()
  seq = seq + 1
  turn = turn % count + 1
  local body = body_head .. string.format("%d", seq) .. body_tail
  return prefixes[turn] .. "Content-Length: " .. #body .. "\r\n\r\n" .. body
end

function response(status, headers, body)
  if window_end > 0 then
    local now = monotonic_ns()
    if now >= window_start and now < window_end then
      in_window = in_window + 1
    end
  end
  if status == 200 and body ~= nil and string.find(body, expect, 1, true)
      and not string.find(body, '"isError":true', 1, true)
      and not string.find(body, '"error":', 1, true) then
    ok = ok + 1
  else
    bad = bad + 1
    if first_bad == nil then
      first_bad = tostring(status) .. " " .. string.sub(body or "", 1, 300)
    end
  end
end

function done(summary, latency, requests)
  local good, wrong, counted, sample = 0, 0, 0, nil
  for _, thread in ipairs(threads) do
    good = good + (thread:get("ok") or 0)
    wrong = wrong + (thread:get("bad") or 0)
    counted = counted + (thread:get("in_window") or 0)
    sample = sample or thread:get("first_bad")
  end
  local e = summary.errors
  io.write(string.format(
    'WRKJSON {"requests":%d,"duration_us":%d,"bytes":%d,"connect_errors":%d,'
      .. '"read_errors":%d,"write_errors":%d,"status_errors":%d,"timeouts":%d,'
      .. '"ok":%d,"bad":%d,"p50_us":%d,"p90_us":%d,"p99_us":%d,"mean_us":%.1f,'
      .. '"max_us":%d,"window_requests":%d}\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write,
    e.status, e.timeout, good, wrong, latency:percentile(50), latency:percentile(90),
    latency:percentile(99), latency.mean, latency.max, counted))
  if sample ~= nil then
    io.write("WRKBAD " .. string.gsub(sample, "[\r\n]", " ") .. "\n")
  end
end
