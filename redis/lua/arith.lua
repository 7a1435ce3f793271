-- arith.lua: exact integer arithmetic on Lua 5.1 numbers.
--
-- Lua 5.1 numbers are doubles: every integer of magnitude ≤ 2^53 is exact,
-- and +, - and * of exact integers are exact as long as the result is. The
-- helpers below keep division and the sliding counter's 86-bit products
-- exact too, so that the scripts decide exactly like sluice's Go code
-- (internal/algo, arith.go) for every value they meet:
--
--   times      µs since sluice.Epoch, |t| < 2^52 (TIME gives ≈ 2^47.5 today)
--   windows    w ≤ 2^45 µs (sluice.MaxWindow); a fixed window's w ≤ 2^46 µs
--              (sluice.MaxFixedWindow): fixed_window.lua only takes
--              window_start(t, w), t + w and differences of times, which
--              for |t| < 2^52 stay below 2^53 and take divmod's one-division
--              branch, exact for every w
--   quantities q, burst ≤ 2^40 (sluice.MaxQuantity)
--   ticks      ≤ 2^53 (sluice validates bucket limits so)


local TWO24 = 16777216
local TWO52 = 4503599627370496
local TWO53 = 9007199254740992

-- MAXTIME mirrors internal/algo.MaxTime (2^61): Decide clamps times into
-- [-MAXTIME, MAXTIME]. Times from TIME never come near it.
local MAXTIME = 2305843009213693952

-- MINTIME mirrors internal/algo.MinTime (-2^61), the earliest time: a
-- state's born when it records none (see born in state.lua).
local MINTIME = -MAXTIME

-- NEVER is what a script returns as retry-after for a check no wait can
-- admit (cost above capacity); the Go side maps it to sluice.Never.
local NEVER = -1

-- divmod returns ⌊a/b⌋ and a mod b for integers 0 ≤ a < 2^53 and any
-- b ≥ 1, and for 2^53 ≤ a ≤ 2^54 and 1 ≤ b ≤ 2^45. Below 2^53, math.floor
-- of the rounded quotient is exact:
-- with a = qb + r, a/b is at least 1/b below q+1, while rounding it up to
-- q+1 ≥ 2^k would take a distance of at most 2^(k-53), so b·q ≥ 2^53 > a.
-- (The correction below only guards that argument.) Above 2^53 it is long
-- division by bytes, each partial dividend r·256 + byte staying below 2^53.
local function divmod(a, b)
  if a < TWO53 then
    local q = math.floor(a / b)
    local r = a - q * b
    if r < 0 then
      q, r = q - 1, r + b
    elseif r >= b then
      q, r = q + 1, r - b
    end
    return q, r
  end
  local hi = math.floor(a / TWO24) -- exact: a power-of-two division
  local lo = a - hi * TWO24
  local q, r = divmod(hi, b)
  local p = 65536
  while p >= 1 do
    local byte = math.floor(lo / p)
    lo = lo - byte * p
    local q2, r2 = divmod(r * 256 + byte, b)
    q, r = q * 256 + q2, r2
    p = p / 256
  end
  return q, r
end

-- floordiv returns ⌊a/b⌋ and a mod b (in [0, b)) for any integer a of
-- magnitude ≤ 2^53 and 1 ≤ b ≤ 2^45, or of magnitude < 2^53 and any b ≥ 1
-- (see divmod).
local function floordiv(a, b)
  if a >= 0 then
    return divmod(a, b)
  end
  local q, r = divmod(-a, b)
  if r == 0 then
    return -q, 0
  end
  return -q - 1, b - r
end

-- ceildiv returns ⌈a/b⌉ for any integer a of magnitude ≤ 2^53, 1 ≤ b ≤ 2^45.
-- Go twin: internal/algo.ceilDiv
local function ceildiv(a, b)
  if a >= 0 and a < TWO53 then -- the common case, divmod's first branch inline
    local q = math.floor(a / b)
    local r = a - q * b
    if r < 0 then
      q, r = q - 1, r + b
    elseif r >= b then
      q, r = q + 1, r - b
    end
    if r > 0 then
      q = q + 1
    end
    return q
  end
  local q = floordiv(-a, b)
  return -q
end

-- window_start returns the start of the window of length w containing t,
-- windows aligned to Epoch.
-- Go twin: internal/algo.windowStart
local function window_start(t, w)
  local _, r = floordiv(t, w)
  return t - r
end

-- DAY is a day in µs; EPOCH_DAYS the days from 1970-01-01 to sluice.Epoch.
local DAY = 86400000000
local EPOCH_DAYS = 18262

-- civil returns the year and month (1-12) of day d since 1970-01-01
-- (Hinnant's civil_from_days; every quotient here is of small integers,
-- which math.floor takes exactly).
-- Go twin: internal/algo.civil
local function civil(d)
  local z = d + 719468
  local era = math.floor(z / 146097)
  local doe = z - era * 146097
  local yoe = math.floor((doe - math.floor(doe / 1460) + math.floor(doe / 36524) - math.floor(doe / 146096)) / 365)
  local doy = doe - (365 * yoe + math.floor(yoe / 4) - math.floor(yoe / 100))
  local mp = math.floor((5 * doy + 2) / 153)
  local m = mp + 3
  if mp >= 10 then
    m = mp - 9
  end
  local y = yoe + era * 400
  if m <= 2 then
    y = y + 1
  end
  return y, m
end

-- days_from_civil returns the day since 1970-01-01 of the first of month m
-- of year y.
-- Go twin: internal/algo.daysFromCivil
local function days_from_civil(y, m)
  if m <= 2 then
    y = y - 1
  end
  local era = math.floor(y / 400)
  local yoe = y - era * 400
  local mp = m - 3
  if m <= 2 then
    mp = m + 9
  end
  local doy = math.floor((153 * mp + 2) / 5)
  return era * 146097 + yoe * 365 + math.floor(yoe / 4) - math.floor(yoe / 100) + doy - 719468
end

-- calendar_window returns the start and end (µs) of the window of calendar
-- period (1 day, 2 week, 3 month, 4 year), shifted by off µs, that holds t.
-- Go twin: internal/algo.CalendarWindow
local function calendar_window(period, off, t)
  local d = floordiv(t - off, DAY) + EPOCH_DAYS
  local first, nxt
  if period == 1 then
    first, nxt = d, d + 1
  elseif period == 2 then
    local _, wd = floordiv(d + 3, 7) -- 1970-01-01 was a Thursday
    first = d - wd
    nxt = first + 7
  else
    local y, m = civil(d)
    if period == 4 then
      first, nxt = days_from_civil(y, 1), days_from_civil(y + 1, 1)
    else
      first = days_from_civil(y, m)
      if m == 12 then
        nxt = days_from_civil(y + 1, 1)
      else
        nxt = days_from_civil(y, m + 1)
      end
    end
  end
  return (first - EPOCH_DAYS) * DAY + off, (nxt - EPOCH_DAYS) * DAY + off
end

-- Go twin: internal/algo.ClampTime
local function clamp_time(t)
  if t > MAXTIME then
    return MAXTIME
  elseif t < -MAXTIME then
    return -MAXTIME
  end
  return t
end

-- muldivmod returns ⌊a·b/c⌋ and a·b mod c for integers 0 ≤ a ≤ 2^46,
-- 0 ≤ b ≤ 2^46, 1 ≤ c ≤ 2^46 whose quotient is below 2^53, although a·b
-- itself may reach 2^92. With b = bq·c + br, a·b = a·bq·c + a·br; a·br is
-- divided by c bit by bit of a (shift and add), every partial remainder
-- staying below 2c ≤ 2^47.
-- Go twin: internal/algo.MulDivFloor
local function muldivmod(a, b, c)
  local p = a * b
  if p < TWO52 then -- the product is exact: one division
    return divmod(p, c)
  end
  local bq, br = divmod(b, c)
  local q, r = 0, 0
  local bit = 1
  while bit * 2 <= a do
    bit = bit * 2
  end
  local rest = a
  while bit >= 1 do
    q, r = q * 2, r * 2
    if r >= c then
      q, r = q + 1, r - c
    end
    if rest >= bit then
      rest = rest - bit
      r = r + br
      if r >= c then
        q, r = q + 1, r - c
      end
    end
    bit = bit / 2
  end
  return a * bq + q, r
end

-- fmt formats an exact integer for Redis. Never pass a number to redis.call
-- directly: Lua turns it into text with "%.14g", which rounds above 10^14.
-- "%d" converts to a C long first, exact for every integer below 2^63
-- (so -0 prints "0"), and costs far less than "%.0f", which prints a double
-- through glibc's multi-precision code.
local function fmt(x)
  return string.format('%d', x)
end
