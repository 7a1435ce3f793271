-- release.lua: gives back concurrency leases (sluice.Releaser). Each key's
-- lease of cost units stamped at its lease time loses one matching entry,
-- if one is left: an expired lease may already be gone. The key keeps its
-- TTL, which still covers what is left.
--
-- KEYS[i]  the state key of a check with a lease to give back
-- ARGV[i]  CHECK_ARGS check arguments, then the lease stamp
--
-- Reply: the number of leases found and given back.

local released = 0
for i = 1, #KEYS do
  local off = (i - 1) * (CHECK_ARGS + 1)
  local c = parse_check(i, off)
  local st = load_state(c)
  if c.alg == CONCURRENCY and not st.fresh then
    if ALG[c.alg].release(c, st, tonumber(ARGV[off + CHECK_ARGS + 1]), tostring(c.alg)) then
      released = released + 1
    end
  end
end
return released
