-- wrk script for make bench: POST new contacts, each with its own email
-- (the same address over and over would pile up on one index key).
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
  local body = '{"first_name":"Load","last_name":"Test ' .. n .. '","company":"Bench","emails":[{"address":"load-' ..
    run .. '-' .. tid .. '-' .. n .. '@example.com","label":"work","primary":true}],"phones":[{"number":"+1 555 0100","label":"mobile"}]}'
  return wrk.format(nil, nil, nil, body)
end
