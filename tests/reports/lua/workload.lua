-- workload.lua — the Lua program of report_tools_test's HtmlOfLua: a few
-- tenths of a second of recursion, sorting, string formatting and matching,
-- tables and closures.  Deterministic, and it never raises an error nor
-- yields a coroutine (Lua does both by longjmp, and gcov's counts, the
-- test's oracle, miss longjmp re-entries).
local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end

local t = {}
for i = 1, 20000 do t[i] = (i * 7919) % 100003 end
table.sort(t)
table.sort(t, function(a, b) return a > b end)

local parts = {}
for i = 1, 5000 do parts[#parts + 1] = string.format("%d:%s", i, string.rep("ab", i % 7)) end
local s = table.concat(parts, ",")
local nums = 0
for _ in s:gmatch("%d+") do nums = nums + 1 end
local swapped = select(2, s:gsub("(%d+):(a?b?)", "%2=%1"))

local counts = {}
for i = 1, 30000 do
  local k = "k" .. (i % 101)
  counts[k] = (counts[k] or 0) + 1
end
local keys = 0
for _ in pairs(counts) do keys = keys + 1 end

local function counter()
  local n = 0
  return function() n = n + 1; return n end
end
local c = counter()
for _ = 1, 10000 do c() end

print(fib(20), t[1], t[#t], nums, swapped, keys, c())
