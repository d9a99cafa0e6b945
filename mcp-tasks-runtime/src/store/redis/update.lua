local v = redis.call('HGET', KEYS[1], 'v')
if not v then return {0} end
if v ~= ARGV[1] then return {1, redis.call('HGET', KEYS[1], 'r')} end
redis.call('HSET', KEYS[1], 'v', ARGV[2], 'r', ARGV[3])
if #ARGV >= 8 and ARGV[7] ~= '-' then
    if ARGV[7] == '' then redis.call('ZREM', KEYS[2], ARGV[6])
    else redis.call('ZADD', KEYS[2], ARGV[7], ARGV[6]) end
    if ARGV[8] == '' then redis.call('PERSIST', KEYS[1])
    else redis.call('PEXPIRE', KEYS[1], ARGV[8]) end
    redis.call('SREM', KEYS[3], ARGV[6])
end
if #ARGV >= 9 then
    redis.call('SREM', KEYS[4], ARGV[6])
    redis.call('SADD', KEYS[3], ARGV[6])
    redis.call('SADD', KEYS[5], ARGV[9])
end
redis.call('PUBLISH', ARGV[4], ARGV[5])
return {2}
