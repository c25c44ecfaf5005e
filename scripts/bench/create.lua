-- wrk script of the bench scripts: POST new contacts, each with its own
-- email (the same address over and over would pile up on one index key).
-- With CREATE_BODY=listmonk in the environment it posts listmonk
-- subscribers of the same shape instead (scripts/bench/listmonk.sh).
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"

local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("tid", threads)
end

local n = 0
local run = tostring(os.time())
local listmonk = os.getenv("CREATE_BODY") == "listmonk"
request = function()
  n = n + 1
  local email = "load-" .. run .. "-" .. tid .. "-" .. n .. "@example.com"
  local body
  if listmonk then
    body = '{"name":"Load Test ' .. n .. '","status":"enabled","email":"' .. email ..
      '","attribs":{"company":"Bench","phone":"+1 555 0100"}}'
  else
    body = '{"first_name":"Load","last_name":"Test ' .. n .. '","company":"Bench","emails":[{"address":"' .. email ..
      '","label":"work","primary":true}],"phones":[{"number":"+1 555 0100","label":"mobile"}]}'
  end
  return wrk.format(nil, nil, nil, body)
end
