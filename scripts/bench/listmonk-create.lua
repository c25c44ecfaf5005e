-- wrk script for listmonk.sh: POST new listmonk subscribers, each with its
-- own email (the same shape of body as create.lua's contacts).
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"

local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("tid", threads)
end

local n = 0
local run = tostring(os.time())
request = function()
  n = n + 1
  local body = '{"name":"Load Test ' .. n .. '","status":"enabled","email":"load-' ..
    run .. '-' .. tid .. '-' .. n .. '@example.com","attribs":{"company":"Bench","phone":"+1 555 0100"}}'
  return wrk.format(nil, nil, nil, body)
end
