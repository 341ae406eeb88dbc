-- wrk's side of the bench's second load generator (bench/wrk.ts runs it).
--
-- With WRK_REFRESH_TOKENS (a file of refresh tokens, one a line) and WRK_REFRESH_AUTHORIZATION: a
-- refresh chain per thread, each thread with one connection (bench/wrk.ts passes -t N -c N), so each
-- connection sends the refresh token the previous answer gave it; a refused token ends that chain
-- alone (counted by wrk as a non-2xx). Without them: wrk's own static request (headers from -H).
-- Either way done() prints one line, WRK_RESULT and a JSON object, for bench/wrk.ts.

local tokens_file = os.getenv("WRK_REFRESH_TOKENS")
local threads = {}
local next_token = 1
local tokens = {}

if tokens_file then
  for line in io.lines(tokens_file) do
    if #line > 0 then tokens[#tokens + 1] = line end
  end
end

function setup(thread)
  threads[#threads + 1] = thread
  if tokens_file then
    thread:set("token", tokens[next_token])
    next_token = next_token + 1
  end
end

local function form_encode(s)
  return (s:gsub("[^%w%-%._~]", function(c) return string.format("%%%02X", string.byte(c)) end))
end

if tokens_file then
  broken = 0

  function init(args)
    wrk.method = "POST"
    wrk.headers["Authorization"] = os.getenv("WRK_REFRESH_AUTHORIZATION")
    wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
    wrk.headers["Accept"] = "application/json"
  end

  function request()
    return wrk.format(nil, nil, nil, "grant_type=refresh_token&refresh_token=" .. form_encode(token))
  end

  function response(status, headers, body)
    local next = status == 200 and body:match('"refresh_token"%s*:%s*"([^"]+)"')
    if next then
      token = next
    else
      broken = broken + 1
      wrk.thread:stop()
    end
  end
end

function done(summary, latency, requests)
  local e = summary.errors
  local broken_chains = 0
  for _, t in ipairs(threads) do broken_chains = broken_chains + (t:get("broken") or 0) end
  io.write(string.format(
    'WRK_RESULT {"requests":%d,"micros":%d,"p50":%.3f,"p99":%.3f,"errors":%d,"broken":%d}\n',
    summary.requests, summary.duration, latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    e.connect + e.read + e.write + e.timeout + e.status, broken_chains))
end
