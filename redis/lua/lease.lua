-- lease.lua: gives back the unspent units of quota leases (see Leased).
-- A lease is units an apply.lua run admitted at once for an instance to
-- spend without asking; what it did not spend comes back here through the
-- algorithm's own undo, exactly as refund.lua takes back a reservation: a
-- window gives the units back only while it still counts the window the
-- lease was taken in (from its previous count once the sliding counter has
-- moved on), a bucket only what has not refilled since the take. A key
-- written since under another algorithm, or gone, is left alone. The key
-- keeps its TTL.
--
-- KEYS[i]  the state key of a lease
-- ARGV     per key: CHECK_ARGS check arguments (the cost: the units to give
--          back), then the undo mark of the take
--
-- Reply: the number of keys given back to.

local back = 0
for i = 1, #KEYS do
  local off = (i - 1) * (CHECK_ARGS + 1)
  local c = parse_check(i, off)
  local st = load_state(c)
  if not st.fresh and c.cost > 0 then
    ALG[c.alg].undo(c, st, ARGV[off + CHECK_ARGS + 1], c.g)
    back = back + 1
  end
end
return back
