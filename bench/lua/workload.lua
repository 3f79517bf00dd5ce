-- A deterministic lua workload mixing recursion, strings, tables, sorting,
-- closures, coroutines and errors (bench/lua_counter_work.sh).
local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end

local t = {}
for i = 1, 60000 do t[i] = (i * 7919) % 100003 end
table.sort(t)
table.sort(t, function(a, b) return a > b end)

local parts = {}
for i = 1, 20000 do
  parts[#parts + 1] = string.format("%d:%s", i, string.rep("ab", i % 9))
end
local s = table.concat(parts, ",")
local words, letters = 0, 0
for w in s:gmatch("%d+") do words = words + 1 end
for _ in s:gmatch("b") do letters = letters + 1 end
local up = s:sub(1, 5000):upper():gsub("A", "z")

local counts = {}
for i = 1, 100000 do
  local k = "k" .. (i % 997)
  counts[k] = (counts[k] or 0) + 1
end
local keys = 0
for _ in pairs(counts) do keys = keys + 1 end

local co = coroutine.wrap(function()
  for i = 1, 5000 do coroutine.yield(i) end
end)
local csum = 0
for _ = 1, 5000 do csum = csum + co() end

local errors = 0
for i = 1, 2000 do
  local ok = pcall(function() if i % 3 == 0 then error("x" .. i) end return i end)
  if not ok then errors = errors + 1 end
end

print(fib(25), t[1], t[#t], #s, words, letters, #up, keys, csum, errors)
