local v = redis.call('HGET', KEYS[1], 'v')
if not v then
    redis.call('ZREM', KEYS[2], ARGV[2])
    redis.call('SREM', KEYS[4], ARGV[2])
    return {0}
end
if v ~= ARGV[1] then return {1, redis.call('HGET', KEYS[1], 'r')} end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[2])
redis.call('ZREM', KEYS[3], ARGV[2])
redis.call('SREM', KEYS[4], ARGV[2])
redis.call('PUBLISH', ARGV[3], ARGV[4])
return {2}
