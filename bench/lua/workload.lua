-- workload.lua — the lua workload of bench/run.sh: recursion, sorting with
-- and without a comparator, string formatting, matching and substitution,
-- table inserts and lookups, closures, metatables (a small class), 
-- coroutines and errors.  About one second with gcc -O2.  Deterministic
-- (run.sh also fixes lua's own hash seed, pointer hashing and sort pivots):
-- the output must be the same for every build.
local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end

-- Sorting.
local t = {}
for i = 1, 200000 do t[i] = (i * 7919) % 100003 end
table.sort(t)
table.sort(t, function(a, b) return a > b end)
local words = {}
for i = 1, 40000 do words[i] = string.format("w%05d", (i * 7717) % 40009) end
table.sort(words)

-- Strings: format, concat, gmatch, gsub, find, upper.
local parts = {}
for i = 1, 60000 do
  parts[#parts + 1] = string.format("%d:%s", i, string.rep("ab", i % 9))
end
local s = table.concat(parts, ",")
local nums, letters = 0, 0
for _ in s:gmatch("%d+") do nums = nums + 1 end
for _ in s:gmatch("b") do letters = letters + 1 end
local up = s:sub(1, 20000):upper():gsub("A", "z")
local swapped = select(2, s:sub(1, 100000):gsub("(%d+):(a?b?)", "%2=%1"))
local found, pos = 0, 1
while true do
  local a = s:find("abab", pos, true)
  if not a then break end
  found, pos = found + 1, a + 1
end

-- Tables as hash maps.
local counts = {}
for i = 1, 300000 do
  local k = "k" .. (i % 997)
  counts[k] = (counts[k] or 0) + 1
end
local keys = 0
for _ in pairs(counts) do keys = keys + 1 end
local grid = {}
for i = 1, 300 do
  local row = {}
  for j = 1, 300 do row[j] = (i * j) % 17 end
  grid[i] = row
end
local gsum = 0
for i = 2, 299 do
  local r, up_, down = grid[i], grid[i - 1], grid[i + 1]
  for j = 2, 299 do gsum = gsum + r[j - 1] + r[j + 1] + up_[j] + down[j] - 4 * r[j] end
end

-- Closures and a metatable class.
local Vec = {}
Vec.__index = Vec
Vec.__add = function(a, b) return setmetatable({x = a.x + b.x, y = a.y + b.y}, Vec) end
function Vec.new(x, y) return setmetatable({x = x, y = y}, Vec) end
function Vec:dot(o) return self.x * o.x + self.y * o.y end
local acc = Vec.new(0, 0)
local dots = 0
for i = 1, 100000 do
  local v = Vec.new(i % 13, i % 7)
  acc = acc + v
  dots = dots + v:dot(acc) % 1000
end
local function counter()
  local n = 0
  return function(d) n = n + d return n end
end
local c = counter()
for i = 1, 100000 do c(i % 3) end

-- Coroutines and errors.
local co = coroutine.wrap(function()
  for i = 1, 50000 do coroutine.yield(i) end
end)
local csum = 0
for _ = 1, 50000 do csum = csum + co() end
local errors = 0
for i = 1, 20000 do
  local ok = pcall(function() if i % 3 == 0 then error("x" .. i) end return i end)
  if not ok then errors = errors + 1 end
end

print(fib(27), t[1], t[#t], words[1], words[#words], #s, nums, letters, #up,
      swapped, found, keys, gsum, acc.x, acc.y, dots, c(0), csum, errors)
