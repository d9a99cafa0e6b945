if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local seq = redis.call('INCR', KEYS[4])
redis.call('HSET', KEYS[1], 'v', 1, 'r', ARGV[1], 's', seq)
redis.call('ZADD', KEYS[2], seq, ARGV[2])
if ARGV[3] ~= '' then redis.call('ZADD', KEYS[3], ARGV[3], ARGV[2]) end
if ARGV[4] ~= '' then redis.call('PEXPIRE', KEYS[1], ARGV[4]) end
if ARGV[7] ~= '' then
    redis.call('SADD', KEYS[6], ARGV[2])
    redis.call('SADD', KEYS[5], ARGV[7])
end
redis.call('PUBLISH', ARGV[5], ARGV[6])
return 1
