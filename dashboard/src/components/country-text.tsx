/** A country as lists and chips show it: its flag, its name, its code (`🇬🇧 United Kingdom (GB)`). */
import type { ReactNode } from 'react';
import { countryFlag, countryName } from '../lib/country.js';

/** The text; the flag is hidden from screen readers, which would read the name twice. */
export function CountryText({ code }: { code: string }): ReactNode {
  const flag = countryFlag(code);
  const name = countryName(code);
  return (
    <>
      {flag !== '' && <span aria-hidden="true">{flag} </span>}
      {name === code ? code : `${name} (${code})`}
    </>
  );
}
