local ids = redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[1], '+inf',
    'WITHSCORES', 'LIMIT', 0, ARGV[2])
local rows = {}
for i = 1, #ids, 2 do
    local r = redis.call('HGET', ARGV[3] .. ids[i], 'r')
    if r then table.insert(rows, {ids[i + 1], r})
    else redis.call('ZREM', KEYS[1], ids[i]) end
end
return {#ids / 2, rows}
