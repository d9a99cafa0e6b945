local now = tonumber(ARGV[1])
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now,
    'LIMIT', 0, ARGV[2])
local lapsed = {}
for _, runner in ipairs(redis.call('SMEMBERS', KEYS[2])) do
    local running = redis.call('SMEMBERS', ARGV[3] .. runner)
    if #running == 0 then
        redis.call('SREM', KEYS[2], runner)
    else
        local til = redis.call('ZSCORE', KEYS[3], runner)
        if not til or tonumber(til) <= now then
            table.insert(lapsed, runner)
            for _, id in ipairs(running) do table.insert(ids, id) end
        end
    end
end
return {ids, lapsed}
